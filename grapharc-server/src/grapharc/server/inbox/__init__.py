"""The approval inbox: sign-in, the pending approvals, and a page per approval to decide it.

Server-rendered (Jinja2 templates shipped with the package, no front-end build); every
decision goes through the durable session layer, as ``grapharc session approve`` does.
"""
