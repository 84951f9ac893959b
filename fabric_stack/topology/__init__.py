"""Stage 3, topology: ``build_topology`` turns a SizingPlan into every port and cable.

``build`` holds the steps, ``model`` the records, ``rename`` the site's names applied, ``verify``
the checks that the link list realises the plan. Layer 2."""
