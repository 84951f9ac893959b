"""The Pulumi side of fabric-stack: adapters that drive the Pulumi engine.

``env`` builds the offline environment for every Pulumi CLI call, ``ops`` runs the
project's stack through the Automation API, and ``changes`` summarizes the engine's
resource steps. Nothing here plans anything; the pure stages in the package root do.
"""
