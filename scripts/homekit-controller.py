#!/usr/bin/env python3
"""A real HomeKit controller (aiohomekit, the library Home Assistant uses) against the
HomeKit bridge of `podbridge run`, for the HomeKit end-to-end tests (HomeKitControllerTests).

  homekit-controller.py pair ID CODE FILE     discover ID over mDNS on loopback, refuse a wrong
                                              code, pair, use the accessories, check refusals;
                                              the pairing is written to FILE
  homekit-controller.py check FILE            a session with the stored pairing (after a restart)
  homekit-controller.py unpair FILE           remove the stored pairing

Each step prints one JSON line ({"step": ..., ...}); the exit status is 0 when the steps ran
(the Swift test judges what they printed).
"""
import asyncio
import json
import sys

from aiohomekit.controller import Controller
from aiohomekit.exceptions import AccessoryNotFoundError
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf

OCCUPANCY = "00000071-0000-1000-8000-0026BB765291"
ON = "00000025-0000-1000-8000-0026BB765291"
NAME = "00000023-0000-1000-8000-0026BB765291"


def say(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def full_type(short):
    short = short.upper()
    return short if "-" in short else short.rjust(8, "0") + "-0000-1000-8000-0026BB765291"


def index(accessories):
    """(aid, iid) per characteristic role: 'occupancy left', 'power right', ... and accessory names."""
    found, names = {}, []
    for accessory in accessories:
        for service in accessory["services"]:
            characteristics = service["characteristics"]
            name = next((c.get("value") for c in characteristics if full_type(c["type"]) == NAME), "")
            names.append(name)
            for c in characteristics:
                t = full_type(c["type"])
                if t == OCCUPANCY:
                    found["occupancy " + name.split()[1]] = (accessory["aid"], c["iid"])
                elif t == ON:
                    words = name.split()  # "Bed left power", "Bed left stop alarm"
                    found[" ".join(words[2:]) + " " + words[1]] = (accessory["aid"], c["iid"])
    return found, names


class Ignore:
    """aiohomekit reads what the browsers find from zeroconf's cache; it needs no callbacks."""

    def add_service(self, zc, type_, name):
        pass

    def remove_service(self, zc, type_, name):
        pass

    def update_service(self, zc, type_, name):
        pass


async def started():
    zeroconf = AsyncZeroconf(interfaces=["127.0.0.1"])
    # aiohomekit uses the browsers its host (Home Assistant) runs: one per HAP transport.
    for hap_type in ("_hap._tcp.local.", "_hap._udp.local."):
        AsyncServiceBrowser(zeroconf.zeroconf, hap_type, listener=Ignore())
    controller = Controller(async_zeroconf_instance=zeroconf)
    await controller.async_start()
    return controller, zeroconf


async def stopped(controller, zeroconf):
    await controller.async_stop()
    await zeroconf.async_close()


async def pair(device_id, code, path):
    controller, zeroconf = await started()
    try:
        discovery = await controller.async_find(device_id.lower(), timeout=60)
        say("discovered", status_flags=int(discovery.description.status_flags),
            config_num=discovery.description.config_num, category=int(discovery.description.category))
        wrong = "111-22-333" if code != "111-22-333" else "222-33-444"
        try:
            finish = await discovery.async_start_pairing("wrong")
            await finish(wrong)
            say("wrong code", refused=False)
        except Exception as error:
            say("wrong code", refused=True, error=type(error).__name__)
        finish = await discovery.async_start_pairing("hub")
        pairing = await finish(code)
        with open(path, "w") as out:
            json.dump(pairing.pairing_data, out)
        say("paired", id=pairing.pairing_data["iOSPairingId"])

        accessories = await pairing.list_accessories_and_characteristics()
        roles, names = index(accessories)
        say("accessories", count=len(accessories), names=names, roles=sorted(roles))

        occupancy = [roles[k] for k in sorted(roles) if k.startswith("occupancy")]
        values = await pairing.get_characteristics(occupancy)
        say("occupancy", values={f"{a}.{i}": v.get("value") for (a, i), v in values.items()})

        # Subscribe to the left side's occupancy; the night's sleeper gets in while we wait.
        events = asyncio.Queue()
        pairing.dispatcher_connect(lambda changes: events.put_nowait(changes))
        left = roles["occupancy left"]
        before = (await pairing.get_characteristics([left]))[left]["value"]
        await pairing.subscribe([left])
        value = before
        try:
            async with asyncio.timeout(120):
                while value == before:
                    changes = await events.get()
                    if left in changes and "value" in changes[left]:
                        value = changes[left]["value"]
            say("occupancy event", before=before, value=value)
        except TimeoutError:
            say("occupancy event", before=before, value=None)

        # Power: the right side on, the left side on then off.
        results = {}
        for key, value in (("power right", True), ("power left", True), ("power left", False)):
            errors = await pairing.put_characteristics([(*roles[key], value)])
            results[f"{key} {value}"] = "ok" if not errors else str(errors)
        read = await pairing.get_characteristics([roles["power left"], roles["power right"]])
        say("power", writes=results, left=read[roles["power left"]]["value"], right=read[roles["power right"]]["value"])

        # Snooze is momentary: written on, it reads off.
        await pairing.put_characteristics([(*roles["snooze left"], True)])
        snooze = await pairing.get_characteristics([roles["snooze left"]])
        say("snooze", value=snooze[roles["snooze left"]]["value"])

        # A second pair-setup while paired is refused.
        try:
            again = await controller.async_find(device_id.lower(), timeout=10)
            finish = await again.async_start_pairing("second")
            await finish(code)
            say("second pair-setup", refused=False)
        except Exception as error:
            say("second pair-setup", refused=True, error=type(error).__name__)

        # A non-admin controller: added by the admin, it may use the accessories, not add pairings.
        guest_key = ed25519.Ed25519PrivateKey.generate()
        guest_public = guest_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        await pairing.add_pairing("guest-controller", guest_public.hex(), "User")
        guest_data = dict(pairing.pairing_data)
        guest_data["iOSPairingId"] = "guest-controller"
        guest_data["iOSDeviceLTSK"] = guest_key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                                              serialization.NoEncryption()).hex()
        guest_data["iOSDeviceLTPK"] = guest_public.hex()
        guest = controller.load_pairing("guest", guest_data)
        guest_accessories = await guest.list_accessories_and_characteristics()
        other = ed25519.Ed25519PrivateKey.generate().public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        try:
            await guest.add_pairing("intruder", other.hex(), "Admin")
            say("guest", accessories=len(guest_accessories), add_refused=False)
        except Exception as error:
            say("guest", accessories=len(guest_accessories), add_refused=True, error=type(error).__name__)
        listed = await pairing.list_pairings()
        say("pairings", ids=sorted(p["pairingId"] for p in listed))
        await guest.close()
        await pairing.close()
    finally:
        await stopped(controller, zeroconf)


async def check(path):
    controller, zeroconf = await started()
    try:
        with open(path) as source:
            pairing = controller.load_pairing("hub", json.load(source))
        accessories = await pairing.list_accessories_and_characteristics()
        roles, _ = index(accessories)
        read = await pairing.get_characteristics([roles["power right"]])
        say("check", count=len(accessories), power_right=read[roles["power right"]]["value"])
        await pairing.close()
    finally:
        await stopped(controller, zeroconf)


async def unpair(path):
    controller, zeroconf = await started()
    try:
        with open(path) as source:
            data = json.load(source)
        pairing = controller.load_pairing("hub", data)
        removed = await pairing.remove_pairing(data["iOSPairingId"])
        say("unpaired", removed=bool(removed))
        await pairing.close()
    finally:
        await stopped(controller, zeroconf)


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "pair":
        asyncio.run(pair(sys.argv[2], sys.argv[3], sys.argv[4]))
    elif command == "check":
        asyncio.run(check(sys.argv[2]))
    elif command == "unpair":
        asyncio.run(unpair(sys.argv[2]))
    else:
        sys.exit(f"unknown command {command}")
