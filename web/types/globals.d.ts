// What the pages' scripts find on the page besides the DOM, for the type check
// (tsconfig.json): the browsers' BarcodeDetector (not in TypeScript's DOM
// library yet), the vendored zxing-wasm reader (web/vendor, an IIFE that sets
// window.ZXingWASM) and Swagger UI (docs.html). Only what the pages use.

interface DetectedBarcode {
  rawValue: string;
}

declare class BarcodeDetector {
  constructor(options?: { formats: string[] });
  static getSupportedFormats(): Promise<string[]>;
  detect(source: CanvasImageSource): Promise<DetectedBarcode[]>;
}

interface ZXingReadResult {
  isValid: boolean;
  text: string;
}

interface ZXingReader {
  prepareZXingModule(options: { overrides: { locateFile: (path: string, prefix: string) => string } }): unknown;
  readBarcodes(image: ImageData, options: { formats: string[]; maxNumberOfSymbols: number }): Promise<ZXingReadResult[]>;
}

declare const SwaggerUIBundle: ((options: Record<string, unknown>) => unknown) & { presets: { apis: unknown } };
declare const SwaggerUIStandalonePreset: unknown;

interface Window {
  /** web/vendor/zxing-wasm/reader.js, where the door page loaded it. */
  ZXingWASM?: ZXingReader;
  /** The Swagger UI of docs.html. */
  ui?: unknown;
  /** The door page's scan → verdict times, in ms (the browser tests read them). */
  doorTimings: number[];
}
