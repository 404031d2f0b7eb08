// TrafficModel: what every stage speaks. An HTTP exchange (`Exchange`, its `HeaderList`), a
// `Recording`, the diagnostics an import attaches and `InputError`; the classification of
// each exchange (initiator, body kind, frame, redirect chain: `ExchangeClassifier`); sites
// from the Public Suffix List; body fingerprints and secrets. It knows no file format, no
// cookie jar and no interception strategy.
