"""The archive-search evaluation: sessions, natural questions over what compaction archived, and the backends."""
