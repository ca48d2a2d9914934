"""Running the corroborating peer scanners (picklescan, modelscan) on hfvet's byte ranges."""
