/** CRONFENCE_EMULATOR names the emulators ensureAwsEndpoint() starts; anything else is refused by name. */
import { describe, expect, it } from 'vitest';
import { EmulatorProfileError, EmulatorSetupError, emulatorProfile } from '../../lib/local/emulator.ts';

describe('emulatorProfile', () => {
  it('is moto unless localstack is asked for', () => {
    expect(emulatorProfile(undefined)).toBe('moto');
    expect(emulatorProfile('')).toBe('moto');
    expect(emulatorProfile('moto')).toBe('moto');
    expect(emulatorProfile('localstack')).toBe('localstack');
  });

  it('refuses any other value, naming it and the allowed ones, as a setup error the CLI prints in one line', () => {
    let caught: unknown;
    try {
      emulatorProfile('LocalStack');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EmulatorProfileError);
    expect(caught).toBeInstanceOf(EmulatorSetupError);
    expect((caught as Error).message).toBe(
      'CRONFENCE_EMULATOR=LocalStack is not a profile; use one of moto, localstack (or unset it for moto)',
    );
  });
});
