"""Certification: the sampling service, EVT against the plan, the certificate and the report."""
