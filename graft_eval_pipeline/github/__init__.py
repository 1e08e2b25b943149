"""GitHub REST reads: client, auth, rate limits, provenance and pull requests turned into card inputs."""
