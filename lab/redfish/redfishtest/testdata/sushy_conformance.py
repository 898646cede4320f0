#!/usr/bin/python3
"""Drive a Redfish service with python3-sushy, the library Ironic uses.

Reads the system's processors and disks as Ironic's redfish inspection
does, walks the virtual-media boot sequence Ironic performs (steps 0-9 of
/work/shared/reference/redfish.md), then checks that bad requests get the
right status and a Redfish error body. The target comes as JSON on stdin:
{"url", "system_id", "user", "password", "image_url", "ca_file",
"hardware"}; hardware, when not null, is {"instruction_set",
"disk_bytes"}, what the processors and disks must be.
Prints one line per check and exits 1 at the first failure.
"""
import json
import os
import sys
import time

import requests
import sushy
import urllib3
from sushy import exceptions
from sushy.resources.manager import constants as mgr_cons

T = json.load(sys.stdin)
VERIFY = T.get('ca_file') or False
POLL_SECONDS = float(T.get('poll_seconds') or 120)
SYSTEM_PATH = '/redfish/v1/Systems/' + T['system_id']
CHECKS = 0

if not VERIFY:
    urllib3.disable_warnings()


class Failure(Exception):
    pass


def check(cond, what):
    global CHECKS
    CHECKS += 1
    if not cond:
        raise Failure(what)


def ok(what):
    print('ok:', what, flush=True)


def connect(password):
    return sushy.Sushy(T['url'], username=T['user'], password=password,
                       verify=VERIFY)


def wait_power(system, want):
    deadline = time.monotonic() + POLL_SECONDS
    while True:
        system.refresh()
        if system.power_state == want:
            return
        if time.monotonic() > deadline:
            raise Failure('PowerState stayed %s, want %s' %
                          (system.power_state, want))
        time.sleep(0.2)


def power(system, reset_type, want):
    system.reset_system(reset_type)
    wait_power(system, want)


def cd_devices(manager):
    out = []
    for v in manager.virtual_media.get_members():
        if (mgr_cons.VirtualMediaType.CD in v.media_types
                or mgr_cons.VirtualMediaType.DVD in v.media_types):
            out.append(v)
    return out


def check_error_body(err, code, mention):
    """err is the "error" object of a Redfish error body."""
    check(isinstance(err, dict), 'error body has an "error" object: %r' % err)
    check(err.get('code', '').startswith('Base.') and
          err['code'].endswith('.' + code),
          'error code %r ends with .%s' % (err.get('code'), code))
    check(err.get('message'), 'error has a message')
    infos = err.get('@Message.ExtendedInfo')
    check(isinstance(infos, list) and infos,
          '@Message.ExtendedInfo is a non-empty list')
    for info in infos:
        for key in ('MessageId', 'Message', 'Severity', 'Resolution'):
            check(info.get(key), 'ExtendedInfo entry has %s: %r' % (key, info))
    if mention:
        text = err['message'] + ' '.join(i['Message'] for i in infos)
        check(mention in text, 'error message mentions %r: %r' %
              (mention, err['message']))


def expect_error(fn, status, code, mention=None):
    try:
        fn()
    except exceptions.HTTPError as e:
        check(e.status_code == status,
              'HTTP %s, want %d: %s' % (e.status_code, status, e))
        check_error_body(e.body, code, mention)
        return
    raise Failure('request succeeded, want HTTP %d %s' % (status, code))


def expect_raw_error(resp, status, code, mention=None):
    check(resp.status_code == status,
          'HTTP %d, want %d: %s' % (resp.status_code, status, resp.text))
    check(resp.headers.get('Content-Type', '').startswith('application/json'),
          'error is JSON')
    check_error_body(resp.json().get('error'), code, mention)


def hardware(system):
    """What Ironic's redfish inspection reads: CPU count and architecture
    from the processors' summary, disk sizes from SimpleStorage (Storage
    must list the same disks)."""
    count = system.json['ProcessorSummary']['Count']
    summary = system.processors.summary
    check(summary.count == count,
          'processors count %d threads, ProcessorSummary.Count is %d' %
          (summary.count, count))
    procs = system.processors.get_members()
    check(len(procs) == count, '%d processors, want %d' % (len(procs), count))
    sets = {p.instruction_set for p in procs}
    check(len(sets) <= 1, 'one instruction set, got %s' % sets)
    disks = system.simple_storage.disks_sizes_bytes
    drives = system.storage.drives_sizes_bytes
    check(disks == drives, 'SimpleStorage disks %s, Storage drives %s' %
          (disks, drives))
    want = T.get('hardware')
    if want:
        names = {s.value if s else None for s in sets}
        if want.get('instruction_set'):
            check(names == {want['instruction_set']},
                  'instruction set %s, want %s' %
                  (names, want['instruction_set']))
        if want.get('disk_bytes') is not None:
            check(disks == sorted(want['disk_bytes']),
                  'disks %s, want %s' % (disks, sorted(want['disk_bytes'])))
    ok('1b %d processors (%s), disks %s' %
       (summary.count, summary.architecture, disks))


def sequence(root):
    # 1. System, then each Manager it names.
    system = root.get_system(SYSTEM_PATH)
    check(system.identity == T['system_id'], 'System Id')
    check(system.uuid, 'System UUID')
    allowed = system.get_allowed_system_boot_source_values()
    for target in (sushy.BootSource.PXE, sushy.BootSource.CD,
                   sushy.BootSource.HDD):
        check(target in allowed, 'boot target %s allowed' % target)
    check(sushy.ResetType.FORCE_OFF in system.get_allowed_reset_system_values(),
          'ForceOff allowed')
    check(system.memory_summary.size_gib, 'MemorySummary.TotalSystemMemoryGiB')
    check(system.json['ProcessorSummary']['Count'] > 0, 'ProcessorSummary.Count')
    check(system.ethernet_interfaces.summary, 'EthernetInterfaces with MACs')
    managers = system.managers
    check(managers, 'Links.ManagedBy')
    manager = managers[0]
    check(manager.manager_type == mgr_cons.ManagerType.BMC, 'ManagerType BMC')
    check(manager.firmware_version, 'FirmwareVersion')
    ok('1 system %s and manager %s' % (system.identity, manager.identity))
    hardware(system)

    # 2. Power off, poll until Off.
    power(system, sushy.ResetType.FORCE_OFF, sushy.PowerState.OFF)
    ok('2 ForceOff -> Off')

    # 3. VirtualMedia collection and members.
    cds = cd_devices(manager)
    check(cds, 'a CD virtual media device')
    cd = cds[0]
    ok('3 virtual media %s' % ', '.join(v.identity for v in cds))

    # 4. Eject every CD: POST with no body and no Content-Type.
    for v in cds:
        v.eject_media()
        v.refresh()
        check(not v.inserted, '%s ejected' % v.identity)
    ok('4 eject (no body)')

    # 5. Insert the image.
    cd.insert_media(T['image_url'])
    cd.refresh()
    check(cd.inserted, 'CD inserted')
    check(cd.image == T['image_url'], 'Image %r' % cd.image)
    check(cd.image_name == T['image_url'].rsplit('/', 1)[-1],
          'ImageName %r' % cd.image_name)
    check(cd.write_protected, 'WriteProtected')
    ok('5 insert %s' % cd.image_name)

    # 6. Boot mode.
    system.set_system_boot_options(mode=sushy.BootSourceOverrideMode.UEFI)
    system.refresh()
    check(system.boot.mode == sushy.BootSourceOverrideMode.UEFI, 'mode UEFI')
    ok('6 boot mode UEFI')

    # 7. One-time boot from CD.
    system.set_system_boot_options(
        target=sushy.BootSource.CD,
        enabled=sushy.BootSourceOverrideEnabled.ONCE)
    system.refresh()
    check(system.boot.target == sushy.BootSource.CD, 'target Cd')
    check(system.boot.enabled == sushy.BootSourceOverrideEnabled.ONCE, 'Once')
    ok('7 boot Cd once')

    # 8. Power on; the one-time override is spent by this boot.
    power(system, sushy.ResetType.ON, sushy.PowerState.ON)
    system.refresh()
    check(system.boot.enabled == sushy.BootSourceOverrideEnabled.DISABLED,
          'Once override back to Disabled after power on, got %s' %
          system.boot.enabled)
    ok('8 On -> On, override spent')

    # 9. After deployment: off, eject, boot disk for good, on.
    power(system, sushy.ResetType.FORCE_OFF, sushy.PowerState.OFF)
    cd.eject_media()
    cd.refresh()
    check(not cd.inserted, 'CD ejected')
    system.set_system_boot_options(
        target=sushy.BootSource.HDD,
        enabled=sushy.BootSourceOverrideEnabled.CONTINUOUS)
    system.refresh()
    check(system.boot.target == sushy.BootSource.HDD, 'target Hdd')
    check(system.boot.enabled == sushy.BootSourceOverrideEnabled.CONTINUOUS,
          'Continuous')
    power(system, sushy.ResetType.ON, sushy.PowerState.ON)
    system.refresh()
    check(system.boot.enabled == sushy.BootSourceOverrideEnabled.CONTINUOUS,
          'Continuous survives power on')
    power(system, sushy.ResetType.FORCE_OFF, sushy.PowerState.OFF)
    ok('9 off, eject, Hdd continuous, on, off')
    return system, cd


def bad_requests(root, system, cd):
    conn = root._conn
    session = conn._session  # carries the client's credentials
    url = T['url']
    reset = system._actions.reset.target_uri

    expect_error(lambda: conn.post(reset, data={'ResetType': 'Explode'}),
                 400, 'ActionParameterNotSupported', 'Explode')
    ok('bad: unknown ResetType -> 400')

    expect_error(lambda: conn.patch(SYSTEM_PATH, data={'AssetTag': 'x'}),
                 400, 'PropertyUnknown', 'AssetTag')
    ok('bad: PATCH of an unsupported property -> 400')

    resp = session.post(url + reset, data='{"ResetType": ',
                        headers={'Content-Type': 'application/json'})
    expect_raw_error(resp, 400, 'MalformedJSON')
    ok('bad: malformed JSON -> 400')

    expect_error(lambda: root.get_system('/redfish/v1/Systems/no-such-system'),
                 404, 'ResourceNotFound', 'no-such-system')
    ok('bad: unknown system -> 404')

    expect_error(lambda: system.processors.get_member(
        SYSTEM_PATH + '/Processors/no-such-cpu'),
        404, 'ResourceNotFound', 'no-such-cpu')
    expect_error(lambda: system.storage.get_member(
        SYSTEM_PATH + '/Storage/no-such-storage'),
        404, 'ResourceNotFound', 'no-such-storage')
    ok('bad: unknown processor and storage -> 404')

    resp = requests.get(url + SYSTEM_PATH, verify=VERIFY)
    expect_raw_error(resp, 401, 'NoValidSession')
    check(resp.headers.get('WWW-Authenticate', '').startswith('Basic'),
          'WWW-Authenticate: Basic')
    ok('bad: no credentials -> 401')

    wrong = connect('wrong-' + T['password'])
    expect_error(lambda: wrong.get_system(SYSTEM_PATH), 401, 'NoValidSession')
    ok('bad: wrong password -> 401')

    expect_error(lambda: cd.insert_media('http://192.0.2.1/boot.iso'),
                 400, 'ActionParameterValueError', 'loopback')
    ok('bad: non-loopback image URL -> 400')

    name = system.name
    if name and name != system.identity:
        resp = session.get(url + '/redfish/v1/Systems/' + name,
                           allow_redirects=False)
        check(resp.status_code == 307, 'alias answers 307, got %d' %
              resp.status_code)
        check(resp.headers.get('Location', '').endswith(SYSTEM_PATH),
              'Location %r' % resp.headers.get('Location'))
        by_name = root.get_system('/redfish/v1/Systems/' + name)
        check(by_name.identity == system.identity, 'alias leads to the system')
        ok('alias: %s -> 307 %s' % (name, SYSTEM_PATH))
    else:
        ok('alias: system has no name distinct from its Id; nothing to check')


def main():
    # 0. Service root without credentials, then login.
    resp = requests.get(T['url'] + '/redfish/v1/', verify=VERIFY)
    check(resp.status_code == 200, 'service root without credentials')
    root = connect(T['password'])
    check(root.redfish_version, 'RedfishVersion')
    mode = 'session' if root._auth.get_session_key() else 'basic'
    ok('0 service root, authenticated by %s' % mode)
    system, cd = sequence(root)
    bad_requests(root, system, cd)
    print('PASS: %d checks, sushy %s, auth %s' %
          (CHECKS, sushy.__version__, mode), flush=True)


if __name__ == '__main__':
    os.environ.setdefault('NO_PROXY', '127.0.0.1,localhost,::1')
    try:
        main()
    except Failure as e:
        print('FAIL:', e, flush=True)
        sys.exit(1)
