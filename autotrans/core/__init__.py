"""The ground floor: the problem, device identity and limits, paths. Imports nothing else of autotrans."""
