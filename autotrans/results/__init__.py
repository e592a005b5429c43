"""Tuning results: the typed record, the sqlitedict store, export/import files and the shipped results."""
