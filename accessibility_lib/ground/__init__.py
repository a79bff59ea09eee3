"""The ground every stage stands on: argument checks, the resumable result store, progress bars, paths."""
