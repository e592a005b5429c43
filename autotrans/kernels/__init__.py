"""The kernel configuration type and the template renderer."""
