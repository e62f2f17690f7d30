"""The application layer: the one way in. Every entry point (HTTP, CLI, bench, helpdesk hooks) submits
an investigation through `app.intake.submit_investigation`."""
