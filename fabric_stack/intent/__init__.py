"""Stage 4, intent: ``derive_intent`` turns a topology into one record per Pulumi resource.

``model`` holds the records, ``derive`` the steps, ``wire`` their Pulumi wire format. Layer 2."""
