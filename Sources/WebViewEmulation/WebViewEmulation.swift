// WebViewEmulation: the behaviour model and the emulated WKWebView. The rules
// (`Resources/rules.json`, `RuleCatalog`, rendered in docs/rules.md), iOS profiles and
// framework releases, the interception strategies and the mitigations with their hooks, app
// shells, offline packages, prefetch and HTTPDNS, the presets that compose them (built in or
// from a preset file, each strategy and mitigation kind registered once in
// `PresetRegistry`), and `WebViewEmulator`, which replays a recording under one preset
// into `Outcome`s. It detects nothing: Findings reads the outcomes.
