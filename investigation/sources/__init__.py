"""Knowledge sources, the pure part: what an item of a helpdesk or folder becomes, who may see it, what is
redacted from tickets, which indexed documents a sync writes or removes, and which resolutions recur."""
