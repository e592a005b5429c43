"""The backend boundary: the only package that talks to the CUDA driver (PyCUDA)."""
