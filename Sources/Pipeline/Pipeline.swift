// Pipeline: the stages put together. `ImportPipeline` takes a file (format told by content),
// imports HAR or capture, classifies each exchange and works out its cookies' provenance,
// and streams the recording into the store; `ReplayRunner` builds each recording's
// `ReplayInput` once, replays it under every preset, detects the findings and stores the
// run. The CLI and the bench call these rather than assembling stages themselves.
