"""Scenarios: the file's schema, the driver that runs one on either runtime, expectations, the
timeline's actions and the report."""
