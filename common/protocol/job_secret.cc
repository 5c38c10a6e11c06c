#include "common/protocol/job_secret.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/hex_text.h"

namespace hvdrun {

std::string RandomBytes(size_t count) {
  std::string bytes(count, '\0');
  size_t filled = 0;
  while (filled < count) {
    ssize_t got = getrandom(bytes.data() + filled, count - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "hvdrun: cannot read random bytes (getrandom): %s\n", std::strerror(errno));
      std::abort();
    }
    filled += static_cast<size_t>(got);
  }
  return bytes;
}

std::string NewJobSecret() { return HexEncode(RandomBytes(kJobSecretBytes)); }

bool IsValidJobSecret(std::string_view secret_hex) {
  if (secret_hex.size() != 2 * kJobSecretBytes) return false;
  for (char c : secret_hex) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string HmacSha256Hex(std::string_view key_hex, std::string_view message) {
  std::optional<std::string> decoded = HexDecode(key_hex);
  if (!decoded) return "";
  std::string key = std::move(*decoded);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest,
           &digest_size) == nullptr) {
    OPENSSL_cleanse(key.data(), key.size());
    return "";
  }
  OPENSSL_cleanse(key.data(), key.size());
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), digest_size));
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace hvdrun
