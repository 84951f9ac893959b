"""The physical plant: racks on the floor, cable lengths, media, part numbers and labels.

A pure stage over a :class:`~fabric_stack.topology.build.FabricTopology` and the spec's
``layout`` section: :func:`plant_of` gives every cable its length, medium, SKU and labels and
every rack its units and power; :func:`check_plant` lists what is over budget or reach.
"""

from fabric_stack.plant.check import PlantCheck, check_plant
from fabric_stack.plant.plan import CableRun, Plant, RackLoad, plan_plant, plant_of

__all__ = [
    "CableRun",
    "Plant",
    "PlantCheck",
    "RackLoad",
    "check_plant",
    "plan_plant",
    "plant_of",
]
