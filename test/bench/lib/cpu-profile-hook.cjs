// SIGUSR2 toggles a CPU profile (start / stop + write to $PROF_DIR/<title>-<pid>-<n>.cpuprofile)
const inspector = require("node:inspector");
const fs = require("node:fs");
const path = require("node:path");
const s = new inspector.Session();
s.connect();
let on = false,
  n = 0;
process.on("SIGUSR2", () => {
  if (!on) {
    s.post("Profiler.enable", () =>
      s.post("Profiler.setSamplingInterval", { interval: 500 }, () =>
        s.post("Profiler.start", () => {
          on = true;
        }),
      ),
    );
  } else {
    s.post("Profiler.stop", (err, { profile }) => {
      on = false;
      const name = path.basename(process.argv[1] || "node").replace(/\W/g, "_");
      fs.writeFileSync(
        path.join(
          process.env.PROF_DIR,
          `${process.argv[1].split("/").slice(-3, -2)[0]}-${name}-${process.pid}-${n++}.cpuprofile`,
        ),
        JSON.stringify(profile),
      );
    });
  }
});
