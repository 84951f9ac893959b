"""Where every rendered setting comes from: the vendor documents a reviewer can check.

Each renderer quotes these in a comment next to the settings they justify, so a
generated file carries its own references. Keep them to primary sources (vendor
manuals, upstream source/docs), one per setting group.
"""

from __future__ import annotations

CUMULUS_ROCE = (
    "https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-512/"
    "Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE/"
)
"""Cumulus Linux 5.12 'RDMA over Converged Ethernet - RoCE': the lossless profile's defaults
(trust, SP3→TC3 RoCE, SP6→TC6 CNP, ETS strict/50/50, ECN 150 KB–1.5 MB on TC3, PFC on SP3)
and the `nv set qos roce mode lossless` / mapping / pfc change commands."""

CUMULUS_QOS = (
    "https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-512/"
    "Layer-1-and-Switch-Ports/Quality-of-Service/"
)
"""Cumulus Linux 5.12 'Quality of Service': DSCP trust (`trust l3`), default DSCP→SP table."""

NVUE_QOS = "https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Set-and-Unset-Commands/QoS/"
"""NVUE command reference, QoS: `nv set qos mapping|egress-queue-mapping|pfc|congestion-control`."""

NVUE_INTERFACE = (
    "https://docs.nvidia.com/networking-ethernet-software/nvue-reference/"
    "Set-and-Unset-Commands/Interface/"
)
"""NVUE reference, Interface: `link mtu` (552–9216, default 9216), `description`, `breakout`."""

CUMULUS_PORTS = (
    "https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-512/"
    "Layer-1-and-Switch-Ports/Interface-Configuration-and-Management/Switch-Port-Attributes/"
)
"""Cumulus Linux 5.12 'Switch Port Attributes': breakouts (`link breakout 2x` → swpNs0, swpNs1)."""

CUMULUS_BGP = (
    "https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-512/"
    "Layer-3/Border-Gateway-Protocol-BGP/Basic-BGP-Configuration/"
)
"""Cumulus Linux 5.12 'Basic BGP Configuration': `nv set router bgp autonomous-system|router-id`,
`nv set vrf default router bgp neighbor swp51 remote-as external` (unnumbered), `... network`,
the leaf example with `bridge domain br_default access 10` and `interface vlan10 ip address`."""

CUMULUS_BRIDGE = (
    "https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-512/"
    "Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode/"
)
"""Cumulus Linux 5.12 'VLAN-aware Bridge Mode': the default bridge `br_default`, `nv set bridge
domain br_default vlan <vid>`, access ports, and the VLAN interface (SVI) `interface vlan<vid>`."""

NVUE_BGP = (
    "https://docs.nvidia.com/networking-ethernet-software/nvue-reference/"
    "Set-and-Unset-Commands/BGP/"
)
"""NVUE reference, BGP: `neighbor <id> type numbered|unnumbered`, `path-selection multipath
aspath-ignore`, `address-family ipv4-unicast multipaths ebgp` (1-128, default 64),
`redistribute connected enable`, `aggregate-route`, peer-group `bfd enable` (all since 5.0)."""

NVUE_AR = (
    "https://docs.nvidia.com/networking-ethernet-software/nvue-reference/"
    "Set-and-Unset-Commands/Adaptive-Routing/"
)
"""NVUE reference, Adaptive Routing: `nv set router adaptive-routing` and `nv set interface <id>
router adaptive-routing`; `enable on` in Cumulus Linux 5.14 and earlier (`state enabled` after)."""

CUMULUS_INTERFACES = (
    "https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-512/"
    "Layer-1-and-Switch-Ports/Interface-Configuration-and-Management/"
)
"""Cumulus Linux 5.12 'Interface Configuration and Management': `nv set interface swp1 link state
up|down` (administrative state)."""

NVUE_CLI = (
    "https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-512/"
    "System-Configuration/NVIDIA-User-Experience-NVUE/NVUE-CLI/"
)
"""Cumulus Linux 5.12 'NVUE CLI': `nv config apply` (running) and `nv config save` (startup
configuration, survives a reboot)."""

SONIC_CONFIG_DB = "https://github.com/sonic-net/SONiC/wiki/Configuration"
"""SONiC wiki 'Configuration': config_db.json tables and keys (DEVICE_METADATA, PORT, INTERFACE,
LOOPBACK_INTERFACE, BGP_NEIGHBOR, DSCP_TO_TC_MAP, TC_TO_QUEUE_MAP, PORT_QOS_MAP, WRED_PROFILE,
QUEUE, BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG …)."""

SONIC_YANG = (
    "https://github.com/sonic-net/sonic-buildimage/tree/master/src/sonic-yang-models/yang-models"
)
"""SONiC's YANG models of config_db (sonic-port.yang, sonic-interface.yang, sonic-bgp-neighbor.yang,
sonic-port-qos-map.yang, sonic-buffer-*.yang, sonic-wred-profile.yang …)."""

SONIC_SN5600_PORTS = (
    "https://github.com/sonic-net/sonic-buildimage/blob/master/device/mellanox/"
    "x86_64-nvidia_sn5600-r0/Mellanox-SN5600-O128/port_config.ini"
)
"""SN5600 O128 port table: Ethernet<first lane>, 4 lanes per 400G port, alias etp<cage>a/b."""

OPENSM_OPTIONS = "https://github.com/linux-rdma/opensm/blob/master/opensm/osm_subnet.c"
"""Upstream OpenSM option table (opt_tbl): routing_engine, sm_priority, lmc, node_name_map_name,
partition_config_file, root_guid_file, sweep_interval … and their opensm.conf comments."""

OPENSM_PARTITIONS = "https://github.com/linux-rdma/opensm/blob/master/doc/partition-config.txt"
"""Upstream OpenSM partition file format (Default=0x7fff, ipoib, mtu=<IBTA code> : ALL=full ;)."""

OPENSM_ROUTING = "https://github.com/linux-rdma/opensm/blob/master/doc/current-routing.txt"
"""Upstream OpenSM routing engines (ftree, updn, minhop …) and the fat-tree root/CN GUID files."""

SHARP_SETUP = (
    "https://docs.nvidia.com/networking/display/SHARPv320/Setting+up+NVIDIA+SHARP+Environment"
)
"""NVIDIA SHARP deployment guide: AM next to the master SM; engines updn/ar_updn/ftree/ar_ftree."""

SHARP_OPENSM = (
    "https://docs.nvidia.com/networking/display/sharpv380/"
    "Disabling+SHARP+on+Specific+Network+Devices+in+OpenSM"
)
"""NVIDIA SHARP guide: OpenSM `sharp_enabled` (NVIDIA OpenSM extension; 2 = enable everywhere)."""

NODE_NAME_MAP = "https://github.com/linux-rdma/rdma-core/blob/master/infiniband-diags/man/common/sec_node_name_map.rst"
"""infiniband-diags node-name-map format: `# comment` lines and `<guid> "<name>"` lines."""

NCCL_ENV = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
"""NCCL user guide, Environment Variables (NCCL_IB_HCA, NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX,
NCCL_IB_TC, NCCL_CROSS_NIC, NCCL_COLLNET_ENABLE …)."""

NCCL_SHARP_PLUGIN = "https://github.com/Mellanox/nccl-rdma-sharp-plugins"
"""NVIDIA's NCCL RDMA + SHARP network plugin (CollNet over SHARP)."""

SRIOV_OPERATOR = "https://github.com/k8snetworkplumbingwg/sriov-network-operator"
"""SR-IOV Network Operator: SriovNetworkNodePolicy, SriovNetwork, SriovIBNetwork CRDs and the
NetworkAttachmentDefinition it renders (cni type `sriov`, or `ib-sriov` for InfiniBand)."""

NAD_SPEC = "https://github.com/k8snetworkplumbingwg/network-attachment-definition-client"
"""Multus NetworkAttachmentDefinition CRD (k8s.cni.cncf.io/v1)."""

WHEREABOUTS = "https://github.com/k8snetworkplumbingwg/whereabouts"
"""Whereabouts cluster-wide IPAM (`{"type": "whereabouts", "range": …}`)."""

UFM_SM_FILES = (
    "https://docs.nvidia.com/networking/display/ufmenterpriseumv62311/"
    "Appendix-%E2%80%93-SM-Default-Files"
)
"""UFM Enterprise manual, 'SM Default Files': /opt/ufm/files/conf/opensm/{opensm.conf,
ib-node-name-map, partitions.conf, qos-policy.conf, prefix-routes.conf}."""

UFM_PARTITIONS = (
    "https://docs.nvidia.com/networking/display/ufmenterpriseumv6194/Appendix+Partitioning"
)
"""UFM Enterprise manual, 'Appendix: Partitioning': UFM generates partitions.conf (not to be
edited); custom lines go in /opt/ufm/files/conf/partitions.conf.user_ext, merged by UFM
(or /opt/ufm/scripts/sync_partitions_conf.sh)."""

SRIOV_RDMA_GUIDE = (
    "https://github.com/k8snetworkplumbingwg/sriov-network-operator/blob/master/doc/"
    "rdma-configuration.md"
)
"""SR-IOV Network Operator RDMA guide: SriovNetworkPoolConfig ``rdmaMode: exclusive``, isRdma
node policy, the rdma meta-plugin on the network (the CRD field is ``metaPlugins``)."""

RDMA_CNI = "https://github.com/k8snetworkplumbingwg/rdma-cni"
"""RDMA CNI meta-plugin (``{"type": "rdma"}``): moves an RDMA device into the pod netns."""

NETWORK_OPERATOR = "https://github.com/Mellanox/network-operator"
"""NVIDIA Network Operator: NicClusterPolicy, HostDeviceNetwork, IPoIBNetwork CRDs and the
example CRs (example/crs/…_nicclusterpolicy_cr-ipoib.yaml, …_cr-ocp-hostdev.yaml)."""

RDMA_SHARED_DP = "https://github.com/Mellanox/k8s-rdma-shared-dev-plugin"
"""RDMA shared device plugin: configList of resourceName, rdmaHcaMax, selectors (ifNames …)."""

SRIOV_DP = "https://github.com/k8snetworkplumbingwg/sriov-network-device-plugin"
"""SR-IOV network device plugin: resourceList of resourceName, selectors (vendors, pfNames,
isRdma …); the Network Operator's host-device path hands out whole PFs with it."""

MPI_OPERATOR = "https://github.com/kubeflow/mpi-operator"
"""Kubeflow MPI Operator: MPIJob kubeflow.org/v2beta1 (Launcher/Worker replica specs)."""

NCCL_TESTS = "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md"
"""nccl-tests: bus bandwidth definition, ``# Avg bus bandwidth`` summary line."""

GPU_OPERATOR_RDMA = (
    "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html"
)
"""GPU Operator: GPUDirect RDMA (driver.rdma.enabled / nvidia-peermem, or DMA-BUF)."""

MULTUS = "https://github.com/k8snetworkplumbingwg/multus-cni"
"""Multus CNI: attaches the NetworkAttachmentDefinitions named in a pod's networks annotation."""

MLNX_QOS = (
    "https://docs.nvidia.com/networking/display/mlnxofedv24102180lts/quality+of+service+(qos)"
)
"""NVIDIA MLNX_OFED 24.10 LTS, Quality of Service: ``mlnx_qos`` (trust, PFC, DSCP→priority,
cable length), the RoCE ToS → priority flow and ``cma_roce_tos``."""

MLNX_ECN = (
    "https://docs.nvidia.com/networking/display/mlnxofedv24102180lts/"
    "Explicit+Congestion+Notification+(ECN)"
)
"""NVIDIA MLNX_OFED 24.10 LTS, ECN: ``/sys/class/net/<interface>/ecn/<protocol>/enable/<prio>``
for the DCQCN reaction point and notification point."""

RDMA_CM_CONFIGFS = "https://www.kernel.org/doc/Documentation/ABI/testing/configfs-rdma_cm"
"""Linux ABI: ``/config/rdma_cm/<hca>/ports/<port>/default_roce_tos`` (0-255), the RDMA-CM
default ToS ``cma_roce_tos`` sets."""

NIC_CONFIGURATION_OPERATOR = "https://github.com/Mellanox/nic-configuration-operator"
"""NVIDIA NIC configuration operator: ``NicConfigurationTemplate`` (``roceOptimized.qos``)."""
