"""One router per resource: investigations, deliveries, health, and the HTML trace page."""
