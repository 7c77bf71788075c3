"""Everything podplan prints: tables, plan documents, manifests, scripts, the HTML report."""
