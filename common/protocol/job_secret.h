// The per-job secret that every connection to hvdrun's rendezvous service proves it holds, and the
// HMAC-SHA256 that the proofs are made of (docs/protocol.md, "Rendezvous service").
//
// A job secret is 32 random bytes written as 64 lower-case hexadecimal digits; it travels to the
// ranks in their environment (HVDRUN_SECRET) and never over the network. Code that handles a secret
// must not log it or put it into an error message. Every function here is thread-safe.
#ifndef HVDRUN_COMMON_PROTOCOL_JOB_SECRET_H_
#define HVDRUN_COMMON_PROTOCOL_JOB_SECRET_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace hvdrun {

// Bytes of randomness in a job secret and in a handshake nonce.
inline constexpr size_t kJobSecretBytes = 32;

// `count` bytes from the kernel's random source (getrandom). Aborts if the kernel has none: there
// is no safe fallback, and a job cannot be secured without it.
std::string RandomBytes(size_t count);

// A fresh job secret: kJobSecretBytes random bytes as 64 lower-case hex digits.
std::string NewJobSecret();

// Whether `secret_hex` has the shape NewJobSecret gives: exactly 64 lower-case hex digits.
bool IsValidJobSecret(std::string_view secret_hex);

// HMAC-SHA256 of `message` keyed with the bytes that `key_hex` spells (any even number of hex
// digits, either case), as 64 lower-case hex digits. Returns an empty string when `key_hex` is not
// hex, so that no proof can ever equal it.
std::string HmacSha256Hex(std::string_view key_hex, std::string_view message);

// Whether a and b are equal, in time that depends on their lengths only (not on where they
// differ), so that comparing a proof reveals nothing about the expected one.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace hvdrun

#endif  // HVDRUN_COMMON_PROTOCOL_JOB_SECRET_H_
