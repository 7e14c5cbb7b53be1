"""The approval inbox: sign-in, the pending approvals (live), a page per approval to decide it, the
decisions made so far and a page per thread.

Server-rendered (Jinja2 templates shipped with the package, one stylesheet and one small script
under a strict CSP, no front-end build); every decision goes through the durable session layer, as
``grapharc session approve`` does.
"""
