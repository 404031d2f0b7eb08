// Reports: a run as people and tools read it. The table, Markdown, JUnit, HTML and JSON
// reports, a recording's `show`, the comparison of a preset's neighbouring releases, the CI
// gate against a baseline, and the redaction of secrets in all of them.
