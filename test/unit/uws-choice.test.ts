// Which uWebSockets.js build each Node and OS combination gets (runtime/uws.ts), and the one line where none fits.
import t from "tap";
import {
  chooseUws,
  loadUws,
  type Platform,
  thisPlatform,
  UWS_CURRENT,
  UWS_NODE20_OLD_GLIBC,
} from "../../runtime/uws.ts";

const linux = (abi: string, glibc: string | undefined, node = "x"): Platform => ({
  platform: "linux",
  arch: "x64",
  abi,
  glibc,
  node,
});

t.test("v20.57 wherever its binaries load: Node 20-25, glibc >= 2.38 on Linux, macOS, Windows", async (t) => {
  for (const abi of ["115", "127", "137", "141"]) {
    t.same(chooseUws(linux(abi, "2.38")), { package: UWS_CURRENT }, `linux abi ${abi} glibc 2.38`);
    t.same(chooseUws(linux(abi, "2.41")), { package: UWS_CURRENT }, `linux abi ${abi} glibc 2.41`);
    t.same(chooseUws(linux(abi, "3.0")), { package: UWS_CURRENT }, `linux abi ${abi} glibc 3.0`);
    t.same(chooseUws({ platform: "darwin", arch: "arm64", abi, glibc: undefined, node: "x" }), {
      package: UWS_CURRENT,
    });
    t.same(chooseUws({ platform: "win32", arch: "x64", abi, glibc: undefined, node: "x" }), { package: UWS_CURRENT });
  }
});

t.test("Node 20 on an older glibc keeps v20.30", async (t) => {
  t.same(chooseUws(linux("115", "2.36")), { package: UWS_NODE20_OLD_GLIBC });
  t.same(chooseUws(linux("115", "2.31")), { package: UWS_NODE20_OLD_GLIBC });
  t.same(chooseUws({ ...linux("115", "2.36"), arch: "arm64" }), { package: UWS_NODE20_OLD_GLIBC });
  t.same(chooseUws(linux("115", "2.27")), { package: UWS_NODE20_OLD_GLIBC }, "its binaries need glibc 2.27");
  t.ok("error" in chooseUws(linux("115", "2.26", "20.0.0")), "below that nothing loads: refused in one line");
});

t.test("anything else is refused in one line naming what works", async (t) => {
  const cases: [Platform, RegExp][] = [
    [linux("137", "2.36", "24.21.0"), /Node 24\.21\.0 on linux-x64 with glibc 2\.36/],
    [linux("127", "2.37", "22.1.0"), /Node 22\.1\.0 on linux-x64 with glibc 2\.37/],
    [linux("137", undefined, "24.0.0"), /without glibc/],
    [linux("147", "2.41", "26.0.0"), /Node 26\.0\.0/],
    [linux("108", "2.41", "18.0.0"), /Node 18\.0\.0/],
    [{ platform: "freebsd", arch: "x64", abi: "137", glibc: undefined, node: "24.0.0" }, /freebsd-x64/],
    [{ platform: "win32", arch: "arm64", abi: "137", glibc: undefined, node: "24.0.0" }, /win32-arm64/],
  ];
  for (const [p, says] of cases) {
    const c = chooseUws(p);
    t.ok("error" in c, `${p.platform}-${p.arch} abi ${p.abi} glibc ${p.glibc}: refused`);
    if (!("error" in c)) continue;
    t.match(c.error, says);
    t.match(c.error, /glibc >= 2\.38 \(Debian 13, Ubuntu 24\.04 and later\)/, "names what works");
    t.notMatch(c.error, /\n/, "one line");
    t.throws(() => loadUws(p), { message: c.error }, "loadUws refuses it too");
  }
});

t.test("here: the native binding of the chosen build loads", async (t) => {
  const loaded = loadUws();
  t.ok(loaded.binding, "a native binding");
  t.match(loaded.binding, new RegExp(`uws_${process.platform}_${process.arch}_${process.versions.modules}\\.node$`));
  const c = chooseUws(thisPlatform());
  t.equal(loaded.build, "package" in c ? c.package : "none");
  t.equal(typeof loaded.uws.App, "function");
});
