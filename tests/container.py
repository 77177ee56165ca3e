"""The worker run as deploy/ describes it, without a container runtime (none runs on
these machines): an emulation faithful to what the platform gives a container.

`image()` reads deploy/Dockerfile (its final stage: ENV, USER, WORKDIR, CMD); `from_k8s`
and `from_compose` read the manifests themselves (PyYAML) and derive what the process
gets: its uid, gid and supplementary groups, its environment (the image's ENV, then the
manifest's), its command, its volumes with the owners and modes the platform gives them,
and a read-only root filesystem when asked. `run()` then, as root, in new mount and
network namespaces (`unshare`):

- builds a root of its own: the host's system folders and the checkout bind-mounted
  read-only (the image's Python is the checkout's venv: the one stand-in), the image's
  /app with the lexicon its build step installs (root-owned), /etc/hosts naming the
  Redis service, a private /dev/shm (as Docker and k8s give), /tmp on the root;
- mounts the volumes: a k8s emptyDir is a tmpfs root:root 0777 (root:fsGroup 2777 with
  an fsGroup); a k8s Secret's files are root:root with defaultMode, or root:fsGroup with
  defaultMode | 0440 when the pod has an fsGroup (the kubelet's SetVolumeOwnership); a
  compose secret is the host file bind-mounted as it is (its owner and mode);
- remounts the root read-only when the manifest says so;
- starts redis-server on 127.0.0.1:6379 in that network namespace with deploy's ACL
  users, each with the password,
  then the worker chrooted, with the derived ids (setgroups, setgid, setuid) and
  environment, and submits one job as a game server would.

Run as a script inside the namespaces: `python tests/container.py SPEC.json`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
# The host's system and Python, and the checkout's folder (its venv stands in for the
# image's Python; CI clones it anywhere), bind-mounted read-only.
HOST_FOLDERS = ("/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/root/.pyenv", str(ROOT.parent))
PATH = f"{ROOT}/.venv/bin:/usr/local/bin:/usr/bin:/bin"  # the image's Python, stood in for


@dataclass
class File:
    name: str  # relative to its volume, or absolute for the image's own files
    mode: int
    uid: int = 0
    gid: int = 0
    content: str = ""
    source: str = ""  # bind-mount this host file instead (compose secrets)


@dataclass
class Volume:
    target: str
    mode: int
    uid: int = 0
    gid: int = 0
    files: list[File] = field(default_factory=list)


@dataclass
class Container:
    argv: list[str]
    env: dict[str, str]
    uid: int
    gid: int
    groups: list[int]
    workdir: str
    read_only: bool
    volumes: list[Volume]
    image_files: list[File]
    hosts: list[str]


@dataclass(frozen=True)
class Image:
    env: dict[str, str]
    uid: int
    gid: int
    workdir: str
    cmd: list[str]


def image(dockerfile: Path = DEPLOY / "Dockerfile") -> Image:
    """The final stage of the Dockerfile: what a container of it starts with."""
    text = re.sub(r"\\\n\s*", " ", dockerfile.read_text())
    stage = text.split("\nFROM ")[-1]
    env, user, workdir, cmd = {}, "0:0", "/", []
    for line in stage.splitlines():
        word, _, rest = line.partition(" ")
        if word == "ENV":
            key, _, value = rest.partition("=")
            env[key.strip()] = value.strip()
        elif word == "USER":
            user = rest.strip()
        elif word == "WORKDIR":
            workdir = rest.strip()
        elif word == "CMD":
            cmd = json.loads(rest)
    uid, _, gid = user.partition(":")
    if not uid.isdigit() or not gid.isdigit():
        raise AssertionError(f"USER {user}: give numeric uid:gid (k8s runAsNonRoot needs them)")
    return Image(env, int(uid), int(gid), workdir, cmd)


def _lexicon_files(img: Image) -> list[File]:
    """What the image's `anchor lexicon install english` left in ANCHOR_LEXICON_DIR, as
    root (RUN steps run before USER)."""
    folder = img.env["ANCHOR_LEXICON_DIR"]
    build = ROOT / "dictionaries" / "build"
    return [
        File(f"{folder}/{name}", 0o644, source=str(build / name))
        for name in ("english.kwg", "english.kwg.json")
    ]


def from_k8s(
    manifest: dict, img: Image, secrets: dict[str, dict[str, str]], name: str = "worker"
) -> Container:
    """The container `name` of a Deployment, as the kubelet would start it."""
    pod = manifest["spec"]["template"]["spec"]
    (spec,) = [c for c in pod["containers"] if c["name"] == name]
    pod_sc, sc = pod.get("securityContext", {}), spec.get("securityContext", {})
    uid = sc.get("runAsUser", pod_sc.get("runAsUser", img.uid))
    gid = sc.get("runAsGroup", pod_sc.get("runAsGroup", img.gid))
    fs_group = pod_sc.get("fsGroup")
    env = dict(img.env)
    for item in spec.get("env", []):
        if "value" in item:
            env[item["name"]] = str(item["value"])
        else:
            ref = item["valueFrom"]["secretKeyRef"]
            env[item["name"]] = secrets[ref["name"]][ref["key"]]
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = []
    for mount in spec.get("volumeMounts", []):
        source = volumes[mount["name"]]
        if "emptyDir" in source:
            mode, group = (0o2777, fs_group) if fs_group is not None else (0o777, 0)
            mounts.append(Volume(mount["mountPath"], mode, 0, group))
        elif "secret" in source:
            secret = source["secret"]
            data = secrets[secret["secretName"]]
            items = secret.get("items") or [{"key": k, "path": k} for k in data]
            mode = secret.get("defaultMode", 0o644)
            group = 0
            if fs_group is not None:
                mode, group = mode | 0o440, fs_group
            files = [File(i["path"], i.get("mode", mode), 0, group, data[i["key"]]) for i in items]
            dir_mode = 0o3777 if fs_group is not None else 0o1777
            mounts.append(Volume(mount["mountPath"], dir_mode, 0, group, files))
        else:
            raise AssertionError(f"volume kind of {mount['name']} not emulated")
    groups = [gid] + ([fs_group] if fs_group is not None else [])
    return Container(
        argv=spec.get("command") or img.cmd,
        env=env,
        uid=uid,
        gid=gid,
        groups=groups,
        workdir=spec.get("workingDir", img.workdir),
        read_only=bool(sc.get("readOnlyRootFilesystem")),
        volumes=mounts,
        image_files=_lexicon_files(img),
        hosts=["anchor-redis"],
    )


def from_compose(
    compose: dict, img: Image, secret_files: dict[str, Path], name: str = "worker"
) -> Container:
    """The service `name` of docker-compose.yml, as Docker would start it."""
    service = compose["services"][name]
    uid, _, gid = str(service.get("user", f"{img.uid}:{img.gid}")).partition(":")
    if not gid:
        raise AssertionError("compose user: give uid:gid (a bare uid runs with gid 0)")
    env = dict(img.env)
    env.update({k: str(v) for k, v in (service.get("environment") or {}).items()})
    mounts = [Volume("/dev/shm", 0o1777)]  # Docker's 64 MB /dev/shm, the container's own
    secret_dir = Volume("/run/secrets", 0o755)
    for name in service.get("secrets", []):
        host = secret_files[name]
        info = host.stat()
        secret_dir.files.append(
            File(name, info.st_mode & 0o7777, info.st_uid, info.st_gid, source=str(host))
        )
    mounts.append(secret_dir)
    return Container(
        argv=service.get("command") or img.cmd,
        env=env,
        uid=int(uid),
        gid=int(gid),
        groups=[int(gid)],
        workdir=service.get("working_dir", img.workdir),
        read_only=bool(service.get("read_only")),
        volumes=mounts,
        image_files=_lexicon_files(img),
        hosts=["redis"],
    )


def compose_secret_setup(compose_text: str) -> dict[str, int]:
    """The mode, owner and group the compose file's own instructions give the secret
    (`install -m MODE -o OWNER -g GROUP ...` in its header comment)."""
    line = next(ln for ln in compose_text.splitlines() if " install " in ln and "secrets/" in ln)
    words = shlex.split(line.lstrip("# ").split("|", 1)[1])
    opts = {words[i]: words[i + 1] for i in range(len(words) - 1) if words[i].startswith("-")}

    def number(name: str) -> int:  # install's -o/-g: a number, or root
        return 0 if name == "root" else int(name)

    return {
        "mode": int(opts["-m"], 8),
        "uid": number(opts.get("-o", "root")),
        "gid": number(opts.get("-g", "root")),
    }


# ------------------------------------------------------------------ running it
def run(container: Container, password: str, timeout: float = 90) -> dict:
    """Start the container's worker against a Redis of its own and send it one job:
    {"answered": bool, "log": the worker's output, "exit": its status or None}."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps({"container": asdict(container), "password": password}))
        os.chmod(tmp, 0o755)
        done = subprocess.run(
            ["unshare", "--mount", "--net", "--fork", "--propagation", "private",
             sys.executable, __file__, str(spec)],
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise AssertionError(f"the emulation failed:\n{done.stdout}\n{done.stderr}") from None


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


def _build_root(root: Path, c: Container, hosts: Path) -> None:
    _mount("-t", "tmpfs", "-o", "mode=0755", "tmpfs", str(root))
    for folder in HOST_FOLDERS:
        if not os.path.isdir(folder):
            continue
        target = root / folder.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        if folder.startswith("/root/"):
            (root / "root").chmod(0o711)  # the stand-in Python lives under /root
        _mount("--rbind", folder, str(target))
        _mount("-o", "remount,bind,ro", str(target))
    _mount("--bind", str(hosts), str(root / "etc" / "hosts"))
    for folder in ("/proc", "/dev", "/sys"):
        (root / folder.lstrip("/")).mkdir(exist_ok=True)
        _mount("--rbind", folder, str(root / folder.lstrip("/")))
    _mount("-t", "tmpfs", "-o", "mode=1777", "tmpfs", str(root / "dev" / "shm"))
    (root / "tmp").mkdir(exist_ok=True)  # on the root: read-only when the root is
    (root / "tmp").chmod(0o1777)
    workdir = root / c.workdir.lstrip("/")
    workdir.mkdir(parents=True, exist_ok=True)
    for f in c.image_files:
        target = root / f.name.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f.source, target)
        target.chmod(f.mode)
    for v in c.volumes:
        target = root / v.target.lstrip("/")
        target.mkdir(parents=True, exist_ok=True)
        _mount("-t", "tmpfs", "tmpfs", str(target))
        os.chown(target, v.uid, v.gid)
        target.chmod(v.mode)
        for f in v.files:
            path = target / f.name
            if f.source:
                path.touch()
                _mount("--bind", f.source, str(path))
                _mount("-o", "remount,bind,ro", str(path))
            else:
                path.write_text(f.content)
                os.chown(path, f.uid, f.gid)
                path.chmod(f.mode)
    if c.read_only:
        _mount("-o", "remount,ro", str(root))


def _inside(spec_path: str) -> None:
    """In the new namespaces, as root: build the root, start Redis and the worker, send
    a job, print the outcome as one JSON line."""
    import redis

    from anchor.client.client import AnalysisClient, ServiceError
    from anchor.client.protocol import Position, Request

    spec = json.loads(Path(spec_path).read_text())
    raw, password = spec["container"], spec["password"]
    c = Container(**{**raw, "volumes": [], "image_files": []})
    c.volumes = [Volume(**{**v, "files": [File(**f) for f in v["files"]]}) for v in raw["volumes"]]
    c.image_files = [File(**f) for f in raw["image_files"]]
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    work = Path(tempfile.mkdtemp())
    hosts = work / "hosts"
    hosts.write_text("127.0.0.1 localhost " + " ".join(c.hosts) + "\n")
    root = work / "root"
    root.mkdir()
    _build_root(root, c, hosts)
    from anchor.client.protocol.acl import ADMIN, CLIENT, USERS, acl_file

    users = work / "users.acl"  # deploy's users, each with the one password
    users.write_text(acl_file({user.name: password for user in USERS}))
    server = subprocess.Popen(
        ["redis-server", "--port", "6379", "--bind", "127.0.0.1", "--save", "",
         "--aclfile", str(users), "--dir", str(work)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    log = work / "worker.log"

    def become() -> None:
        os.chroot(root)
        os.chdir(c.workdir)
        os.setgroups(c.groups)
        os.setgid(c.gid)
        os.setuid(c.uid)

    env = {"PATH": PATH, "HOME": c.workdir, **c.env}
    worker = subprocess.Popen(
        c.argv, env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT, preexec_fn=become
    )
    answered, deadline = False, time.monotonic() + 60
    url = f"redis://{CLIENT.name}:{password}@127.0.0.1:6379/0"
    try:
        r = redis.Redis.from_url(f"redis://{ADMIN.name}:{password}@127.0.0.1:6379/0")
        while time.monotonic() < deadline and worker.poll() is None:
            try:
                if r.smembers("rq:workers"):
                    break
            except redis.exceptions.ConnectionError:
                pass
            time.sleep(0.2)
        if worker.poll() is None:
            cgp = "15/15/15/15/15/15/15/7CAT5/15/15/15/15/15/15/15 AEINRST/ 0/0 0"
            request = Request(lexicon="english", positions=(Position(cgp=cgp, limit=1),))
            try:
                result = AnalysisClient(url, queue="anchor").analyze(request, timeout=30)
                answered = bool(result.get("ok"))
            except ServiceError:
                answered = False
    finally:
        status = worker.poll()
        if status is None:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(20)
            except subprocess.TimeoutExpired:
                worker.kill()
        server.terminate()
        server.wait(10)
    print(json.dumps({"answered": answered, "exit": status, "log": log.read_text()[-4000:]}))


if __name__ == "__main__":
    _inside(sys.argv[1])
