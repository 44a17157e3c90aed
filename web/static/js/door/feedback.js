// What the door person hears and feels: a distinct sound and vibration for
// each kind of verdict, so that the next scan can start before looking.

/** @type {AudioContext | undefined} */
let audio;

/**
 * Plays a square tone.
 * @param {number} frequency Hz
 * @param {number} start s from now
 * @param {number} length s
 */
function tone(frequency, start, length) {
  audio ??= new AudioContext();
  const osc = audio.createOscillator();
  const gain = audio.createGain();
  osc.frequency.value = frequency;
  osc.type = "square";
  gain.gain.value = 0.08;
  osc.connect(gain).connect(audio.destination);
  const t = audio.currentTime + start;
  osc.start(t);
  osc.stop(t + length);
}

/** @type {Record<import("./verdicts.js").VerdictKind, {tones: [number, number, number][], vibrate: number[]}>} */
const patterns = {
  admitted: { tones: [[1320, 0, 0.12]], vibrate: [80] },
  already: { tones: [[660, 0, 0.12], [660, 0.18, 0.12]], vibrate: [80, 60, 80] },
  refused: { tones: [[220, 0, 0.45]], vibrate: [300] },
  wait: { tones: [[440, 0, 0.08]], vibrate: [] },
};

/**
 * Plays the sound and vibration of a verdict kind.
 * @param {import("./verdicts.js").VerdictKind} kind
 */
export function signal(kind) {
  const p = patterns[kind] ?? patterns.wait;
  try {
    for (const [f, s, l] of p.tones) tone(f, s, l);
  } catch {
    /* no audio: the screen says it */
  }
  if (p.vibrate.length && navigator.vibrate) navigator.vibrate(p.vibrate);
}
