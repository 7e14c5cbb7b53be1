"""Run webhooks: a POST of the run's record to the URL its request named, once the run has ended.

``egress`` decides which addresses a hook may reach, ``signing`` signs the body, ``attempt`` makes
one bounded POST, ``sender`` is each server process's loop over the durable deliveries
(``grapharc.webhooks``), and ``settings`` is what the operator configured.
"""
