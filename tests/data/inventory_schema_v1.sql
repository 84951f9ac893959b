-- The inventory schema before versions were tracked (schema version 1), verbatim from
-- fabric_stack/adapters/inventory/store.py at commit cd12caf, with rows as that code wrote them.
-- tests/test_inventory_schema.py builds a database from it and upgrades it.
CREATE TABLE IF NOT EXISTS fabric_inventory (
    stack       TEXT NOT NULL,
    kind        TEXT NOT NULL,
    name        TEXT NOT NULL,
    bundle      TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT 'planned',
    role        TEXT NOT NULL DEFAULT '',
    model       TEXT NOT NULL DEFAULT '',
    rack        TEXT NOT NULL DEFAULT '',
    a_device    TEXT NOT NULL DEFAULT '',
    a_port      TEXT NOT NULL DEFAULT '',
    b_device    TEXT NOT NULL DEFAULT '',
    b_port      TEXT NOT NULL DEFAULT '',
    speed_gbps  INTEGER NOT NULL DEFAULT 0,
    props       TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (stack, kind, name)
);
CREATE INDEX IF NOT EXISTS fabric_inventory_bundle ON fabric_inventory (stack, kind, bundle);
CREATE VIEW IF NOT EXISTS inventory_switches AS
    SELECT stack, name, role, model, rack, status, updated_at
    FROM fabric_inventory WHERE kind = 'Switch';
CREATE VIEW IF NOT EXISTS inventory_cables AS
    SELECT stack, name, role, a_device, a_port, b_device, b_port, speed_gbps, status, bundle
    FROM fabric_inventory WHERE kind = 'Cable';
INSERT INTO fabric_inventory VALUES ('demo', 'Switch', 'su1-r1-leaf', '', 'planned', 'leaf', 'qm9700', 'su1-rack-1', '', '', '', '', 400, '{"model": "qm9700", "port_gbps": 400, "ports_down": 16, "ports_up": 16, "rack": "su1-rack-1", "role": "leaf"}', '2026-10-01T09:00:00+00:00');
INSERT INTO fabric_inventory VALUES ('demo', 'Cable', 'su1-r1-leaf:1/1/1', 'su1-r1-leaf/downlinks', 'planned', 'node_leaf', '', '', 'su1-node-01', 'mlx5_0', 'su1-r1-leaf', '1/1/1', 400, '{"a_device": "su1-node-01", "a_port": "mlx5_0", "a_speed_gbps": 400, "b_device": "su1-r1-leaf", "b_port": "1/1/1", "role": "node_leaf"}', '2026-10-01T09:00:01+00:00');
INSERT INTO fabric_inventory VALUES ('site-b', 'Vlan', 'storage', '', 'installed', '', '', '', '', '', '', '', 0, '{"mtu": 9000, "network": "storage", "vlan": 200}', '2026-10-02T10:30:00+00:00');
