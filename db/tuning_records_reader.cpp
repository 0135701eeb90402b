// The dispatcher's view of a tuning database (src/core/tuning_records.h): a read-only
// connection and the reader's queries; a writable connection only for a cubin write-back.
#include <memory>

#include "db/cubin_store.h"
#include "db/db_connection.h"
#include "db/tuning_db_reader.h"
#include "src/core/error.h"
#include "src/core/tuning_records.h"

namespace tgemm {

namespace {

class DbTuningRecords final : public TuningRecords {
 public:
  DbTuningRecords(const std::string& path, CubinWriteBack write_back)
      : path_(path), write_back_(write_back), db_(path, DbConnection::Mode::read_only) {}

  std::vector<DeviceInfo> devices() override { return reader_.devices(); }

  std::vector<BestEntry> best_entries(const std::string& device_name,
                                      const std::string& arch) override {
    return reader_.best_entries("", device_name, arch);
  }

  std::vector<TrialRecord> trials(const std::string& device_name,
                                  const std::string& arch) override {
    std::vector<TrialRecord> out;
    for (TrialRecord& r : reader_.trials("", device_name))
      if (r.arch == arch) out.push_back(std::move(r));
    return out;
  }

  std::vector<DeviceCeiling> ceilings(const std::string& device_name,
                                      const std::string& arch) override {
    return reader_.ceilings(device_name, arch);
  }

  std::optional<BinaryRecord> find_binary(const KernelConfig& config,
                                          const std::string& template_hash, const Problem& variant,
                                          const std::string& arch,
                                          const std::string& nvrtc_version) override {
    return reader_.find_binary_for(config, template_hash, variant, arch, nvrtc_version);
  }

  // A short-lived writable connection that waits at most 50 ms and neither creates nor
  // migrates the file: a busy tuner, a read-only or older file costs the next process one
  // compile, never this call a stall or a changed schema.
  void write_back(const KernelConfig& config, const std::string& template_hash,
                  const CompiledKernel& compiled) override {
    if (write_back_ == CubinWriteBack::off)
      fail(
          "tuning database '{}' is only read: cubin write-back is off (TGEMM_DB_WRITE_BACK=1 "
          "turns it on)",
          path_);
    DbConnection writable(path_, DbConnection::Mode::read_write);
    writable.set_busy_timeout_ms(50);
    CubinStore store(writable);
    const int64_t run = store.begin_run(kCubinWriteBackRun, "tgemm", compiled.arch);
    const int64_t kernel_id = store.upsert_kernel(config, template_hash);
    store.store_binary(run, kernel_id, compiled, BinaryStatus::ok, "");
    store.finish_run(run, "stored 1 cubin");
  }

 private:
  std::string path_;
  CubinWriteBack write_back_;
  DbConnection db_;
  TuningDbReader reader_{db_};
};

}  // namespace

std::unique_ptr<TuningRecords> open_tuning_records(const std::string& path,
                                                   CubinWriteBack write_back) {
  return std::make_unique<DbTuningRecords>(path, write_back);
}

}  // namespace tgemm
