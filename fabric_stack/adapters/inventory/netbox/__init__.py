"""NetBox as the inventory: a store composed of small parts, as httpx's transports are.

:class:`~.store.NetBoxStore` implements the inventory protocol and composes:

* the client (:mod:`.client`, over the bounded transport of :mod:`.http`; :mod:`.fake` is
  the in-memory stand-in for tests; :mod:`.progress` reports bulk writes on a terminal);
* :class:`~.definitions.Definitions`: the definitions every stack shares (custom fields of
  :mod:`.custom_fields`, tag, site, types, roles, racks) and the plan's NetBox details
  (:mod:`.plan`);
* :class:`~.objects.ObjectWriter`: writes by difference, devices and interfaces;
* :class:`~.cabling.Cabling`: Cable and RdmaNic records, under the switch locks of
  :mod:`.locks`;
* :class:`~.prefixes.Prefixes`: Rail and Vlan records on their shared prefixes
  (:mod:`.subnets` says which record holds which object);
* :class:`~.ipam.UnderlayIpam`: ASNs, loopbacks, addresses; :class:`~.backfill.Backfill`
  brings objects written before the plan was known up to it.

Each part gets its collaborators in its constructor; none inherits from another. The
mapping of records onto NetBox objects and back is :mod:`.mapping`; drift's write-back of
cable statuses is :mod:`.status`.
"""
