// Pipeline: the stages put together. `RecordingSource` resolves what a command is given
// (stored names, files, folders) into recordings, imported first where they are files;
// `ImportPipeline` takes a file (format told by content), imports HAR or capture,
// classifies each exchange and works out its cookies' provenance, and streams the recording
// into the store; `LiveCapture` records from an interface; `ReplayRunner` builds each
// recording's `ReplayInput` once, replays it under every preset, detects the findings and
// stores the run as `RunResult`s; `ObservedRun` holds what reached `serve` against the
// recording. The CLI and the bench call these rather than assembling stages themselves;
// the values these take and hand out (recordings, presets and profiles, findings, the store
// and its rows) are re-exported, so that a caller of the pipeline imports it alone.
@_exported import Findings
@_exported import ReportStore
@_exported import TrafficModel
@_exported import WebViewEmulation
