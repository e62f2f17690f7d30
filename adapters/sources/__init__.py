"""Readers of knowledge sources (helpdesk articles, solved tickets, a folder, a docs site): each turns its
stored cursor into the next page of items (`investigation.sources.items.Page`) and the cursor after it."""
