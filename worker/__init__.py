"""Anchor's RQ worker: msgpack jobs from Redis, analysed with preloaded (mmapped) lexica."""
