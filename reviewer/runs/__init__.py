"""Agent runs on a bank through Inspect (issue 29): one Inspect task per condition, the raw record in a sandbox,
the passes as epochs, and the runs written in the scorer's format (schemas/run.schema.json).

Layer: after drafting, before failures; imports record, bank, scoring, review and drafting, never the app.
"""
