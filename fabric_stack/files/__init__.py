"""Every file fabric-stack reads or writes: the bad-input contract in one place.

``inputs`` (every read), ``outputs`` (every write, atomic), ``config`` (a spec from YAML or a
stack's config), ``names_file`` (the site's names CSV). Layer 3."""
