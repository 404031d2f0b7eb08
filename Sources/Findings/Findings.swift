// Findings: what went wrong, said once per exchange and code. The codes (`FindingCode`),
// `Finding` with its subjects, likelihood and rank, its sentence kept as form and values and
// put into words from the rule catalogue (`FindingDetail`), and `FindingDetector`, which
// holds each preset's outcome against what the recording says the server received.
