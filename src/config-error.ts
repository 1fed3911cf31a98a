// A setting that is missing or malformed: start-up stops with a message naming the variable (src/startup.ts).
export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`)
    this.name = 'ConfigError'
  }
}
