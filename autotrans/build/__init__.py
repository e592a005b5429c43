"""Compiling kernels: nvcc, the content-addressed kernel store."""
