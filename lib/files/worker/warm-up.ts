import { exportFit } from "../export/index";
import { syntheticActivity } from "../synthetic";
import { prepareUpload } from "./run-task";

/*
 * A new worker's first files are slow: V8 optimises the FIT decoder and the code after it only
 * once they have run a while. On the bench machine a 4-hour ride took 220–330 ms in a new
 * worker, 140–240 ms the next two times and 80–120 ms warm. So a new worker reads a generated
 * 20-minute run (1,200 samples) a few times (the pool's `warmUpSteps`) while nothing waits for
 * it: each read is one step, 10–25 ms once the first ones have run, and a task that arrives
 * waits only for the step in progress (tasks are read between steps, `setImmediate`).
 */

/**
 * Runs the warm-up steps between the worker's tasks, then calls `done`, with the error that
 * stopped them if one did (warming is only an optimisation: the worker goes on serving tasks).
 */
export function warmUp(steps: number, done: (err?: unknown) => void): void {
  let file: Uint8Array | undefined;
  let left = steps;
  const step = () => {
    if (left <= 0) return done();
    try {
      // Making the file is a step of its own (about 0.1 s in a new process), so no step is long.
      if (!file) file = exportFit(syntheticActivity({ hours: 1 / 3, hz: 1, sport: "run", seed: 1 }));
      else {
        prepareUpload(file, "fit");
        left--;
      }
    } catch (err) {
      return done(err);
    }
    setImmediate(step);
  };
  setImmediate(step);
}
