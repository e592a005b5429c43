"""The package version (setup.cfg reads it from here)."""
VERSION = "0.1.0"
