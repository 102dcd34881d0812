"""Translations of the handbook: PO catalogs per page, tracked paragraph by paragraph against the English."""
