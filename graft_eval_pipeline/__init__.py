"""graft-eval: evaluates the card engine on sealed case sets, as a Dagster pipeline and a CLI."""
