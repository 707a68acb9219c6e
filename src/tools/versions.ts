/**
 * The versions of OpenTofu and of the providers this project is built and tested with.
 * The providers are the ones the CDKTF prebuilt bindings in package.json pin
 * (@cdktf/provider-kubernetes 12.1.1 -> 2.38.0, -null 11.0.1 -> 3.2.4, -random 12.0.1 -> 3.7.2,
 * -external 11.0.1 -> 2.3.5). toolchain/build-tools.sh builds exactly these; a unit test keeps
 * the two lists equal.
 */
export const TOFU_VERSION = '1.12.6';

export interface PinnedProvider {
  /** Type name, as in `terraform-provider-<name>`. */
  readonly name: string;
  readonly version: string;
}

export const PINNED_PROVIDERS: readonly PinnedProvider[] = [
  { name: 'kubernetes', version: '2.38.0' },
  { name: 'null', version: '3.2.4' },
  { name: 'random', version: '3.7.2' },
  { name: 'external', version: '2.3.5' },
];

/** The platform directory of the provider mirror. Only this one is built. */
export const MIRROR_PLATFORM = 'linux_amd64';
