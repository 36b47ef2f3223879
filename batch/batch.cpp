// nmc batch's discovery, shards, source fingerprints, the skip rule, the per-material records and the reports
// (batch.h). The process runner is in batch_runner.cpp, the claims of batches sharing OUT in batch_claims.cpp.
#include "batch/batch.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/checksum.h"
#include "core/device_name.h"
#include "core/file_io.h"
#include "format/pack.h"
#include "material/file_naming.h"
#include "material/image_io.h"
#include "material/manifest.h"

namespace nmc {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

// Source images and manifests are hashed whole; this bounds one read (4 GiB: far beyond any texture).
constexpr uint64_t kMaxSourceBytes = uint64_t{4} << 30;
// Records and manifests are small JSON files.
constexpr uint64_t kMaxJsonBytes = 64u << 20;

bool hidden(const fs::path& p) {
    const std::string name = p.filename().string();
    return !name.empty() && name[0] == '.';
}

bool is_map_image(const fs::path& file) {
    const std::string name = file.filename().string();
    return !image_format_from_file_name(name).empty() && match_file_name(name).has_value();
}

// A manifest candidate: a JSON object with a "textures" key. Broken JSON is not a manifest (other tools keep
// JSON files in asset trees too); a manifest with bad entries is, and fails when compressed.
bool is_manifest_file(const fs::path& file) {
    if (file.extension() != ".json") return false;
    auto bytes = read_file(file.string(), kMaxJsonBytes);
    if (!bytes.ok()) return false;
    const Json j = Json::parse(bytes->begin(), bytes->end(), nullptr, false);
    return j.is_object() && j.contains("textures");
}

std::string generic_relative(const fs::path& p, const fs::path& root) {
    const std::string rel = p.lexically_relative(root).generic_string();
    return rel.empty() ? "." : rel;
}

void walk(const fs::path& dir, const fs::path& root, const fs::path& out, const fs::path& out_root,
          std::vector<BatchMaterial>& found) {
    std::error_code ec;
    std::vector<fs::path> files, dirs;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const fs::path p = it->path();
        if (hidden(p)) continue;
        std::error_code type_ec;
        if (it->is_symlink(type_ec)) {
            if (it->is_regular_file(type_ec)) files.push_back(p);  // linked files count; linked folders do not
            continue;
        }
        if (it->is_directory(type_ec)) {
            if (fs::weakly_canonical(p, type_ec) != out) dirs.push_back(p);
        } else if (it->is_regular_file(type_ec)) {
            files.push_back(p);
        }
    }
    std::sort(files.begin(), files.end());
    std::sort(dirs.begin(), dirs.end());
    std::vector<fs::path> manifests;
    bool has_maps = false;
    for (const fs::path& f : files) {
        if (is_manifest_file(f))
            manifests.push_back(f);
        else
            has_maps = has_maps || is_map_image(f);
    }
    if (!manifests.empty()) {
        for (const fs::path& m : manifests) {
            BatchMaterial b;
            b.relative = generic_relative(m, root);
            b.input = m.string();
            b.manifest = true;
            b.output = (out_root / fs::path(b.relative).replace_extension(".nmc")).string();
            found.push_back(std::move(b));
        }
    } else if (has_maps) {
        BatchMaterial b;
        b.relative = generic_relative(dir, root);
        b.input = dir.string();
        const fs::path rel = b.relative == "." ? root.filename() : fs::path(b.relative);
        b.output = (out_root / rel).string() + ".nmc";
        found.push_back(std::move(b));
    }
    for (const fs::path& d : dirs) walk(d, root, out, out_root, found);
}

Status hash_file(const fs::path& path, const std::string& name, std::vector<SourceFile>& out) {
    auto bytes = read_file(path.string(), kMaxSourceBytes);
    if (!bytes.ok()) return bytes.status();
    out.push_back({name, Sha256::hex_digest(bytes->data(), bytes->size()), bytes->size()});
    return Status::success();
}

Json sources_json(const std::vector<SourceFile>& sources) {
    Json a = Json::array();
    for (const SourceFile& s : sources) a.push_back({{"name", s.name}, {"sha256", s.sha256}, {"bytes", s.bytes}});
    return a;
}

}  // namespace

Result<std::vector<BatchMaterial>> discover_materials(const std::string& root, const std::string& out_dir) {
    std::error_code ec;
    if (!fs::is_directory(root, ec))
        return Status(StatusCode::io_error, root + ": not a folder (nmc batch needs the root of an asset tree)");
    const fs::path root_path = fs::path(root).lexically_normal();
    const fs::path out_canonical = fs::weakly_canonical(out_dir, ec);
    std::vector<BatchMaterial> found;
    walk(root_path, root_path, out_canonical, fs::path(out_dir), found);
    return found;
}

int shard_of(const std::string& relative, int shard_count) {
    Sha256 h;
    h.update(relative.data(), relative.size());
    const auto digest = h.finish();
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | digest[static_cast<size_t>(i)];
    return static_cast<int>(v % static_cast<uint64_t>(shard_count));
}

Result<ShardSpec> parse_shard(const std::string& text) {
    const size_t slash = text.find('/');
    const Status bad(StatusCode::invalid_argument,
                     "--shard must be I/N with 0 <= I < N (a job array's index and size), got '" + text + "'");
    if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) return bad;
    const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
    const auto digits = [](const std::string& s) {
        return s.size() <= 6 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (!digits(a) || !digits(b)) return bad;
    ShardSpec s{std::stoi(a), std::stoi(b)};
    if (s.count < 1 || s.index >= s.count) return bad;
    return s;
}

Result<std::vector<std::string>> batch_devices(const std::string& device, const char* cuda_visible_devices,
                                               const std::function<int()>& cuda_device_count) {
    if (device == "cpu") return std::vector<std::string>{};
    std::vector<std::string> devices;
    if (device == "cuda") {
        int visible = 0;
        if (cuda_visible_devices == nullptr) {
            visible = cuda_device_count();
        } else {
            std::string list = std::string(cuda_visible_devices) + ",";
            for (size_t start = 0, comma; (comma = list.find(',', start)) != std::string::npos; start = comma + 1)
                visible += comma > start;
        }
        if (visible < 1)
            return Status(StatusCode::backend_unavailable,
                          cuda_visible_devices ? "--device cuda: CUDA_VISIBLE_DEVICES='" +
                                                     std::string(cuda_visible_devices) + "' names no GPU"
                                               : std::string("--device cuda: no CUDA device is visible"));
        for (int i = 0; i < visible; ++i) devices.push_back("cuda:" + std::to_string(i));
        return devices;
    }
    const Status bad(StatusCode::invalid_argument,
                     "--device must be cpu, cuda, cuda:N[,M...] or cuda:N[,cuda:M...], got '" + device + "'");
    if (device.rfind("cuda:", 0) != 0) return bad;
    const std::string list = device.substr(5) + ",";
    for (size_t start = 0, comma; (comma = list.find(',', start)) != std::string::npos; start = comma + 1) {
        std::string one = list.substr(start, comma - start);
        if (one.rfind("cuda:", 0) != 0) one = "cuda:" + one;
        if (one == "cuda:" || !cuda_index_of_device(one)) return bad;
        devices.push_back(one);
    }
    return devices;
}

std::string slot_device(const std::vector<std::string>& devices, size_t slot) {
    return devices.empty() ? "cpu" : devices[slot % devices.size()];
}

Result<std::vector<SourceFile>> hash_sources(const BatchMaterial& material) {
    std::vector<SourceFile> sources;
    std::error_code ec;
    fs::path folder = material.input;
    if (material.manifest) {
        NMC_RETURN_IF_ERROR(hash_file(material.input, fs::path(material.input).filename().string(), sources));
        folder = fs::path(material.input).parent_path();
        // A broken manifest still gets a fingerprint (of itself and its folder); it fails when compressed.
        auto manifest = read_manifest(material.input);
        if (manifest.ok() && !manifest->folder.empty()) folder /= manifest->folder;
    }
    std::vector<fs::path> files;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code type_ec;
        if (!it->is_regular_file(type_ec) || hidden(it->path())) continue;
        if (!image_format_from_file_name(it->path().filename().string()).empty()) files.push_back(it->path());
    }
    if (ec) return Status(StatusCode::io_error, folder.string() + ": cannot list the folder: " + ec.message());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) NMC_RETURN_IF_ERROR(hash_file(f, f.filename().string(), sources));
    return sources;
}

std::string batch_fingerprint(const std::vector<SourceFile>& sources, const BatchSettings& settings) {
    char numbers[160];
    std::snprintf(numbers, sizeof numbers, "bpp=%.17g\nsteps=%lld\nbatch=%d\nseed=%llu\n", settings.bpp,
                  static_cast<long long>(settings.steps), settings.batch_size,
                  static_cast<unsigned long long>(settings.seed));
    std::string text = "nmc batch fingerprint 1\ntool=" + settings.tool + "\nquality=" + settings.quality + "\n" + numbers;
    // Only a set target and an arithmetic other than float32 (the only one before format 2.0) enter the text, so
    // the fingerprints of packs built without them stay what they were.
    if (settings.target_psnr > 0) {
        std::snprintf(numbers, sizeof numbers, "target_psnr=%.17g\n", settings.target_psnr);
        text += numbers;
    }
    if (settings.arithmetic != "float32") text += "arithmetic=" + settings.arithmetic + "\n";
    // The material options likewise only when not their defaults.
    if (settings.normal_mode != "auto") text += "normal_mode=" + settings.normal_mode + "\n";
    if (settings.address_mode != "wrap") text += "address_mode=" + settings.address_mode + "\n";
    if (settings.resample) text += "resample\n";
    if (settings.gloss_to_roughness) text += "gloss_to_roughness\n";
    for (const SourceFile& s : sources) text += s.name + "\t" + s.sha256 + "\n";
    return Sha256::hex_digest(text.data(), text.size());
}

std::string record_path(const BatchMaterial& material) {
    return material.output + ".state.json";
}

namespace {

Json record_json(const MaterialRecord& r) {
    Json j;
    j["record_version"] = 1;
    j["material"] = r.relative;
    j["output"] = r.output;
    j["status"] = r.status;
    j["fingerprint"] = r.fingerprint;
    j["error"] = r.error;
    j["exit_code"] = r.exit_code;
    j["maps"] = r.maps;
    j["width"] = r.width;
    j["height"] = r.height;
    j["mip_count"] = r.mip_count;
    j["source_bytes"] = r.source_bytes;
    j["bcn_bytes"] = r.bcn_bytes;
    j["pack_bytes"] = r.pack_bytes;
    j["bits_per_texel"] = r.bits_per_texel;
    j["ratio_vs_source"] = r.ratio_vs_source;
    j["ratio_vs_bcn"] = r.ratio_vs_bcn;
    j["psnr_db"] = r.psnr_db;
    j["psnr8_mip0_db"] = r.psnr8_mip0_db;
    Json textures = Json::array();
    for (const TextureRow& t : r.textures)
        textures.push_back({{"texture", t.texture}, {"psnr_db", t.psnr_db}, {"psnr8_mip0_db", t.psnr8_mip0_db}});
    j["textures"] = std::move(textures);
    Json ignored = Json::array();
    for (const IgnoredImage& i : r.ignored_images) ignored.push_back({{"file", i.file}, {"reason", i.reason}});
    j["ignored_images"] = std::move(ignored);
    j["warnings"] = r.warnings;
    j["collapsed_textures"] = r.collapsed;
    j["seconds"] = r.seconds;
    j["sources"] = sources_json(r.sources);
    return j;
}

Status write_text_atomically(const std::string& path, const std::string& text) {
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    return write_file_atomically(path, text.data(), text.size());
}

}  // namespace

Status write_record(const std::string& path, const MaterialRecord& r) {
    return write_text_atomically(path, record_json(r).dump(2) + "\n");
}

Result<MaterialRecord> read_record(const std::string& path) {
    auto bytes = read_file(path, kMaxJsonBytes);
    if (!bytes.ok()) return bytes.status();
    const Json j = Json::parse(bytes->begin(), bytes->end(), nullptr, false);
    if (!j.is_object() || j.value("record_version", 0) != 1)
        return Status(StatusCode::corrupt, path + ": not a batch record of version 1");
    try {
        MaterialRecord r;
        r.relative = j.at("material").get<std::string>();
        r.output = j.at("output").get<std::string>();
        r.status = j.at("status").get<std::string>();
        r.fingerprint = j.at("fingerprint").get<std::string>();
        r.error = j.at("error").get<std::string>();
        r.exit_code = j.at("exit_code").get<int>();
        r.maps = j.at("maps").get<int>();
        r.width = j.at("width").get<int>();
        r.height = j.at("height").get<int>();
        r.mip_count = j.at("mip_count").get<int>();
        r.source_bytes = j.at("source_bytes").get<uint64_t>();
        r.bcn_bytes = j.at("bcn_bytes").get<uint64_t>();
        r.pack_bytes = j.at("pack_bytes").get<uint64_t>();
        r.bits_per_texel = j.at("bits_per_texel").get<double>();
        r.ratio_vs_source = j.at("ratio_vs_source").get<double>();
        r.ratio_vs_bcn = j.at("ratio_vs_bcn").get<double>();
        r.psnr_db = j.at("psnr_db").get<double>();
        // Optional: records from before they existed are still valid (a skipped pack refreshes its figures).
        r.psnr8_mip0_db = j.value("psnr8_mip0_db", 0.0);
        for (const Json& t : j.at("textures"))
            r.textures.push_back({t.at("texture").get<std::string>(), t.at("psnr_db").get<double>(),
                                  t.value("psnr8_mip0_db", 0.0)});
        if (j.contains("warnings")) r.warnings = j.at("warnings").get<std::vector<std::string>>();
        if (j.contains("collapsed_textures"))
            r.collapsed = j.at("collapsed_textures").get<std::vector<std::string>>();
        // Required: a record from before the list existed cannot say which images its pack left out, so the
        // material is compressed again (and gets one).
        for (const Json& i : j.at("ignored_images"))
            r.ignored_images.push_back({i.at("file").get<std::string>(), i.at("reason").get<std::string>()});
        r.seconds = j.at("seconds").get<double>();
        for (const Json& s : j.at("sources"))
            r.sources.push_back(
                {s.at("name").get<std::string>(), s.at("sha256").get<std::string>(), s.at("bytes").get<uint64_t>()});
        return r;
    } catch (const Json::exception& e) {
        return Status(StatusCode::corrupt, path + ": batch record: " + e.what());
    }
}

Status fill_record_from_pack(const std::string& pack_path, MaterialRecord& r) {
    ContainerInfo container;
    auto pack = read_pack_file(pack_path, &container);
    if (!pack.ok()) return pack.status();
    const MaterialInfo& m = pack->material;
    r.maps = static_cast<int>(pack->textures.size());
    r.width = m.width;
    r.height = m.height;
    r.mip_count = m.mip_count;
    r.pack_bytes = container.file_size;
    // The same expression as `nmc inspect` (bits per mip-0 texel of the whole file).
    r.bits_per_texel = static_cast<double>(container.file_size) * 8.0 /
                       (static_cast<double>(m.width) * static_cast<double>(m.height));
    const auto pack_bytes = static_cast<double>(container.file_size);
    r.ratio_vs_source = r.source_bytes > 0 ? static_cast<double>(r.source_bytes) / pack_bytes : 0.0;
    r.ratio_vs_bcn = r.bcn_bytes > 0 ? static_cast<double>(r.bcn_bytes) / pack_bytes : 0.0;
    r.psnr_db = pack->quality.psnr_db;
    r.psnr8_mip0_db = pack->quality.psnr8_mip0_db;
    r.textures.clear();
    for (const TextureQuality& q : pack->quality.textures) r.textures.push_back({q.texture, q.psnr_db, q.psnr8_mip0_db});
    return Status::success();
}

namespace {

// What a record file holds now, to notice another batch rewriting it; empty when there is none.
std::string record_digest(const BatchMaterial& material) {
    auto bytes = read_file(record_path(material), kMaxJsonBytes);
    return bytes.ok() ? Sha256::hex_digest(bytes->data(), bytes->size()) : std::string();
}

// Part (3) of the skip rule: the pack's own record of its sources agrees with the files now on disk.
std::string pack_source_mismatch(const std::string& pack_path, const std::vector<SourceFile>& sources) {
    auto pack = read_pack_file(pack_path);
    if (!pack.ok()) return "pack unreadable: " + pack.status().to_string();
    std::map<std::string, std::string> by_name;
    for (const SourceFile& s : sources) by_name[s.name] = s.sha256;
    for (const TextureLayout& t : pack->textures) {
        if (t.source_sha256.empty()) continue;
        const auto it = by_name.find(fs::path(t.file_name).filename().string());
        if (it == by_name.end()) return "source " + t.file_name + " is gone";
        if (it->second != t.source_sha256) return "source " + t.file_name + " changed";
    }
    return "";
}

}  // namespace

std::vector<BatchJob> plan_batch(const std::vector<BatchMaterial>& materials, const BatchSettings& settings,
                                 bool force, bool strict) {
    std::vector<BatchJob> plan;
    plan.reserve(materials.size());
    for (const BatchMaterial& m : materials) {
        BatchJob job;
        job.material = m;
        job.record_digest = record_digest(m);
        auto sources = hash_sources(m);
        if (!sources.ok()) {
            job.hash_error = sources.status().to_string();
            job.reason = "sources unreadable";
            plan.push_back(std::move(job));
            continue;
        }
        job.sources = std::move(*sources);
        job.fingerprint = batch_fingerprint(job.sources, settings);
        std::error_code ec;
        if (force) {
            job.reason = "--force";
        } else if (!fs::exists(m.output, ec)) {
            job.reason = "no pack";
        } else {
            auto record = read_record(record_path(m));
            if (!record.ok()) {
                job.reason = "no record of how the pack was made";
            } else if (record->status != "ok" || record->fingerprint != job.fingerprint) {
                job.reason = record->status != "ok" ? "last run failed" : "sources or settings changed";
            } else if (const std::string mismatch = pack_source_mismatch(m.output, job.sources); !mismatch.empty()) {
                job.reason = mismatch;
            } else if (strict && !record->ignored_images.empty()) {
                job.reason = "--strict, and the pack leaves out " + std::to_string(record->ignored_images.size()) +
                             " image(s)";
            } else {
                job.existing = std::move(*record);
                const Status filled = fill_record_from_pack(m.output, job.existing);
                if (filled.ok()) {
                    job.action = BatchAction::skip;
                    job.reason = "up to date";
                } else {
                    job.reason = "pack unreadable: " + filled.to_string();
                }
            }
        }
        plan.push_back(std::move(job));
    }
    return plan;
}

std::optional<MaterialRecord> recorded_elsewhere(const BatchJob& job, const BatchSettings& settings, bool strict) {
    if (job.fingerprint.empty() || record_digest(job.material) == job.record_digest) return std::nullopt;
    auto record = read_record(record_path(job.material));
    if (!record.ok() || record->fingerprint != job.fingerprint) return std::nullopt;
    if (record->status == "failed") return std::move(*record);
    BatchJob now = std::move(plan_batch({job.material}, settings, false, strict).front());
    if (now.action != BatchAction::skip) return std::nullopt;
    now.existing.status = "skipped";
    return std::move(now.existing);
}

std::vector<MaterialRecord> collect_records(const std::vector<BatchJob>& plan) {
    std::vector<MaterialRecord> records;
    for (const BatchJob& job : plan) {
        MaterialRecord r;
        auto stored = read_record(record_path(job.material));
        if (stored.ok() && stored->fingerprint == job.fingerprint && !job.fingerprint.empty()) {
            r = std::move(*stored);
            if (r.status == "ok" && !fill_record_from_pack(job.material.output, r).ok()) {
                r.status = "pending";
                r.ignored_images.clear();  // they describe a pack that is no longer there
            }
        } else {
            r.status = "pending";
            r.error = job.hash_error;
        }
        r.relative = job.material.relative;
        r.output = job.material.output;
        records.push_back(std::move(r));
    }
    return records;
}

namespace {

// "a.png (reason); b.png (reason)": one report cell.
std::string ignored_images_text(const MaterialRecord& r) {
    std::string text;
    for (const IgnoredImage& i : r.ignored_images) text += (text.empty() ? "" : "; ") + i.file + " (" + i.reason + ")";
    return text;
}

// RFC 4180 field: quoted when it holds a comma, quote or line break, with quotes doubled.
std::string csv_field(const std::string& text) {
    if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

// The settings as the flags of `nmc batch` that give them, for the report's readers.
std::string settings_flags(const BatchReportContext& context) {
    const BatchSettings& s = context.settings;
    char number[64];
    std::string text;
    const auto flag = [&](const std::string& name, const std::string& value) {
        text += (text.empty() ? "" : " ") + name + (value.empty() ? "" : " " + value);
    };
    std::snprintf(number, sizeof number, "%g", s.bpp);
    flag("--bpp", number);
    if (s.target_psnr > 0) {
        std::snprintf(number, sizeof number, "%g", s.target_psnr);
        flag("--target-psnr", number);
    }
    flag("--quality", s.quality);
    if (s.steps > 0) flag("--steps", std::to_string(s.steps));
    if (s.batch_size > 0) flag("--batch", std::to_string(s.batch_size));
    flag("--seed", std::to_string(s.seed));
    flag("--arithmetic", s.arithmetic);
    flag("--normal-mode", s.normal_mode);
    flag("--address-mode", s.address_mode);
    if (s.resample) flag("--resample", "");
    if (s.gloss_to_roughness) flag("--gloss-to-roughness", "");
    if (context.min_psnr_db > 0) {
        std::snprintf(number, sizeof number, "%g", context.min_psnr_db);
        flag("--min-psnr", number);
    }
    return text;
}

// The totals row: counts by status and of collapsed textures; over the rows with a pack (ok, skipped, failed by --min-psnr) the sums of bytes,
// the rate and ratios of the sums, the lowest PSNR and PSNR8 and the worst texture; the time of the materials run now.
struct ReportTotals {
    std::map<std::string, int> counts = {{"ok", 0}, {"skipped", 0}, {"failed", 0}, {"pending", 0}};
    uint64_t source_bytes = 0, bcn_bytes = 0, pack_bytes = 0;
    double texels = 0;
    double seconds = 0;
    bool any_pack = false;
    double min_psnr_db = 0, min_psnr8_mip0_db = 0;
    std::string worst;  // "material/texture": the texture with the lowest PSNR of all
    double worst_psnr_db = 0;
    size_t collapsed = 0;  // collapsed textures over all materials

    explicit ReportTotals(const std::vector<MaterialRecord>& records) {
        for (const MaterialRecord& r : records) {
            ++counts[r.status];
            collapsed += r.collapsed.size();
            seconds += r.status == "skipped" ? 0.0 : r.seconds;
            if (r.pack_bytes == 0) continue;  // no pack: failed before one was written, or pending
            source_bytes += r.source_bytes;
            bcn_bytes += r.bcn_bytes;
            pack_bytes += r.pack_bytes;
            texels += static_cast<double>(r.width) * static_cast<double>(r.height);
            min_psnr_db = any_pack ? std::min(min_psnr_db, r.psnr_db) : r.psnr_db;
            min_psnr8_mip0_db = any_pack ? std::min(min_psnr8_mip0_db, r.psnr8_mip0_db) : r.psnr8_mip0_db;
            const TextureRow* worst_in_material = worst_texture(r);
            if (worst_in_material && (this->worst.empty() || worst_in_material->psnr_db < worst_psnr_db)) {
                this->worst = r.relative + "/" + worst_in_material->texture;
                worst_psnr_db = worst_in_material->psnr_db;
            }
            any_pack = true;
        }
    }
    double bits_per_texel() const { return texels > 0 ? static_cast<double>(pack_bytes) * 8.0 / texels : 0.0; }
    double ratio(uint64_t bytes) const {
        return pack_bytes > 0 ? static_cast<double>(bytes) / static_cast<double>(pack_bytes) : 0.0;
    }
};

std::string joined(const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& i : items) text += (text.empty() ? "" : "; ") + i;
    return text;
}

std::string csv_report(const std::vector<MaterialRecord>& records, const ReportTotals& totals) {
    size_t texture_columns = 0;
    for (const MaterialRecord& r : records) texture_columns = std::max(texture_columns, r.textures.size());
    std::string csv = "material,status,maps,width,height,source_bytes,bcn_bytes,pack_bytes,bits_per_texel,"
                      "ratio_vs_source,ratio_vs_bcn,psnr_db,psnr8_mip0_db,worst_texture,worst_texture_psnr_db,seconds,"
                      "error,ignored_images,warnings,collapsed_textures";
    for (size_t t = 1; t <= texture_columns; ++t)
        csv += ",texture" + std::to_string(t) + ",texture" + std::to_string(t) + "_psnr_db";
    csv += "\n";
    char line[512];
    for (const MaterialRecord& r : records) {
        csv += csv_field(r.relative) + "," + csv_field(r.status) + ",";
        const TextureRow* worst = worst_texture(r);
        if (r.pack_bytes > 0)
            std::snprintf(line, sizeof line, "%d,%d,%d,%llu,%llu,%llu,%.4f,%.3f,%.3f,%.3f,%.3f,", r.maps, r.width,
                          r.height, static_cast<unsigned long long>(r.source_bytes),
                          static_cast<unsigned long long>(r.bcn_bytes), static_cast<unsigned long long>(r.pack_bytes),
                          r.bits_per_texel, r.ratio_vs_source, r.ratio_vs_bcn, r.psnr_db, r.psnr8_mip0_db);
        else
            std::snprintf(line, sizeof line, ",,,,,,,,,,,");
        csv += line;
        if (worst) {
            std::snprintf(line, sizeof line, ",%.3f,", worst->psnr_db);
            csv += csv_field(worst->texture) + line;
        } else {
            csv += ",,";
        }
        std::snprintf(line, sizeof line, "%.1f,", r.seconds);
        csv += line + csv_field(r.error) + "," + csv_field(ignored_images_text(r)) + "," + csv_field(joined(r.warnings)) +
               "," + csv_field(joined(r.collapsed));
        for (size_t t = 0; t < texture_columns; ++t) {
            if (t < r.textures.size()) {
                std::snprintf(line, sizeof line, ",%.3f", r.textures[t].psnr_db);
                csv += "," + csv_field(r.textures[t].texture) + line;
            } else {
                csv += ",,";
            }
        }
        csv += "\n";
    }
    // The totals row: "(total)" and the status counts, then the sums and the lowest figures (see ReportTotals).
    std::snprintf(line, sizeof line, "(total),%d ok %d skipped %d failed %d pending,,,,%llu,%llu,%llu,%.4f,%.3f,%.3f,",
                  totals.counts.at("ok"), totals.counts.at("skipped"), totals.counts.at("failed"),
                  totals.counts.at("pending"), static_cast<unsigned long long>(totals.source_bytes),
                  static_cast<unsigned long long>(totals.bcn_bytes), static_cast<unsigned long long>(totals.pack_bytes),
                  totals.bits_per_texel(), totals.ratio(totals.source_bytes), totals.ratio(totals.bcn_bytes));
    csv += line;
    if (totals.any_pack) {
        std::snprintf(line, sizeof line, "%.3f,%.3f,", totals.min_psnr_db, totals.min_psnr8_mip0_db);
        csv += line + csv_field(totals.worst);
        std::snprintf(line, sizeof line, ",%.3f,", totals.worst_psnr_db);
        csv += line;
    } else {
        csv += ",,,,";
    }
    std::snprintf(line, sizeof line, "%.1f,,,,", totals.seconds);
    csv += line + std::string(texture_columns * 2, ',') + "\n";
    return csv;
}

std::string markdown_cell(std::string text) {
    for (char& c : text)
        if (c == '|' || c == '\n') c = ' ';
    return text;
}

}  // namespace

void apply_min_psnr(std::vector<MaterialRecord>& records, double min_psnr_db) {
    if (min_psnr_db <= 0) return;
    for (MaterialRecord& r : records) {
        if ((r.status != "ok" && r.status != "skipped") || r.psnr_db >= min_psnr_db) continue;
        char reason[128];
        std::snprintf(reason, sizeof reason, "PSNR %.2f dB is below --min-psnr %.2f dB", r.psnr_db, min_psnr_db);
        r.status = "failed";
        r.error = reason;
        r.exit_code = 6;  // cli/exit_codes.h kExitQuality, as `nmc validate --min-psnr`
    }
}

const TextureRow* worst_texture(const MaterialRecord& record) {
    const auto worst = std::min_element(record.textures.begin(), record.textures.end(),
                                        [](const TextureRow& a, const TextureRow& b) { return a.psnr_db < b.psnr_db; });
    return worst == record.textures.end() ? nullptr : &*worst;
}

Status write_reports(const std::string& out_dir, const std::string& stem, const std::vector<MaterialRecord>& records,
                     const BatchReportContext& context) {
    const ReportTotals totals(records);
    Json materials = Json::array();
    for (const MaterialRecord& r : records) {
        Json j = record_json(r);
        j.erase("record_version");
        const TextureRow* worst = worst_texture(r);
        j["worst_texture"] = worst ? Json({{"texture", worst->texture}, {"psnr_db", worst->psnr_db}}) : Json(nullptr);
        materials.push_back(std::move(j));
    }
    const BatchSettings& s = context.settings;
    Json report;
    report["report_version"] = 1;
    report["nmc_version"] = s.tool;
    report["settings"] = {{"bpp", s.bpp},
                          {"target_psnr", s.target_psnr},
                          {"quality", s.quality},
                          {"steps", s.steps},
                          {"batch", s.batch_size},
                          {"seed", s.seed},
                          {"arithmetic", s.arithmetic},
                          {"normal_mode", s.normal_mode},
                          {"address_mode", s.address_mode},
                          {"resample", s.resample},
                          {"gloss_to_roughness", s.gloss_to_roughness},
                          {"min_psnr", context.min_psnr_db}};
    report["totals"] = {{"materials", records.size()},
                        {"ok", totals.counts.at("ok")},
                        {"skipped", totals.counts.at("skipped")},
                        {"failed", totals.counts.at("failed")},
                        {"pending", totals.counts.at("pending")},
                        {"source_bytes", totals.source_bytes},
                        {"bcn_bytes", totals.bcn_bytes},
                        {"pack_bytes", totals.pack_bytes},
                        {"bits_per_texel", totals.bits_per_texel()},
                        {"ratio_vs_source", totals.ratio(totals.source_bytes)},
                        {"ratio_vs_bcn", totals.ratio(totals.bcn_bytes)},
                        {"min_psnr_db", totals.any_pack ? Json(totals.min_psnr_db) : Json(nullptr)},
                        {"min_psnr8_mip0_db", totals.any_pack ? Json(totals.min_psnr8_mip0_db) : Json(nullptr)},
                        {"worst_texture", totals.any_pack ? Json({{"texture", totals.worst},
                                                                  {"psnr_db", totals.worst_psnr_db}})
                                                          : Json(nullptr)},
                        {"collapsed_textures", totals.collapsed},
                        {"seconds", totals.seconds}};
    report["materials"] = std::move(materials);
    NMC_RETURN_IF_ERROR(write_text_atomically((fs::path(out_dir) / (stem + ".json")).string(), report.dump(2) + "\n"));

    std::string md = "# nmc batch report\n\n";
    md += s.tool + ", " + settings_flags(context) + "\n\n";
    char line[512];
    std::snprintf(line, sizeof line, "%zu materials: %d compressed, %d up to date, %d failed, %d pending.\n\n",
                  records.size(), totals.counts.at("ok"), totals.counts.at("skipped"), totals.counts.at("failed"),
                  totals.counts.at("pending"));
    md += line;
    md += "| material | maps | resolution | source bytes | BCn bytes | pack bytes | bpp | ratio vs BCn | PSNR (dB) | "
          "PSNR8 (dB) | worst texture (dB) | PSNR per texture (dB) | time (s) | status |\n";
    md += "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|\n";
    for (const MaterialRecord& r : records) {
        std::string psnr;
        for (const TextureRow& t : r.textures) {
            std::snprintf(line, sizeof line, "%s%s %.2f", psnr.empty() ? "" : ", ", t.texture.c_str(), t.psnr_db);
            psnr += line;
        }
        const std::string status = markdown_cell(r.error.empty() ? r.status : r.status + ": " + r.error);
        if (r.pack_bytes > 0)
            std::snprintf(line, sizeof line, "| %s | %d | %dx%d | %llu | %llu | %llu | %.3f | %.1f | %.2f | %.2f | ",
                          r.relative.c_str(), r.maps, r.width, r.height,
                          static_cast<unsigned long long>(r.source_bytes), static_cast<unsigned long long>(r.bcn_bytes),
                          static_cast<unsigned long long>(r.pack_bytes), r.bits_per_texel, r.ratio_vs_bcn, r.psnr_db,
                          r.psnr8_mip0_db);
        else
            std::snprintf(line, sizeof line, "| %s | | | | | | | | | | ", r.relative.c_str());
        md += line;
        const TextureRow* worst = worst_texture(r);
        if (worst) {
            std::snprintf(line, sizeof line, " %.2f", worst->psnr_db);
            md += worst->texture + line;
        }
        std::snprintf(line, sizeof line, " | %s | %.1f | ", psnr.c_str(), r.seconds);
        md += line + status + " |\n";
    }
    std::snprintf(line, sizeof line, "| total | | | %llu | %llu | %llu | %.3f | %.1f | ",
                  static_cast<unsigned long long>(totals.source_bytes),
                  static_cast<unsigned long long>(totals.bcn_bytes), static_cast<unsigned long long>(totals.pack_bytes),
                  totals.bits_per_texel(), totals.ratio(totals.bcn_bytes));
    md += line;
    if (totals.any_pack) {
        std::snprintf(line, sizeof line, "min %.2f | min %.2f | %s %.2f", totals.min_psnr_db, totals.min_psnr8_mip0_db,
                      totals.worst.c_str(), totals.worst_psnr_db);
        md += line;
    } else {
        md += "| | ";
    }
    std::snprintf(line, sizeof line, " | | %.1f | %d of %zu done |\n", totals.seconds,
                  totals.counts.at("ok") + totals.counts.at("skipped"), records.size());
    md += line;
    std::string left_out, warnings, collapsed;
    for (const MaterialRecord& r : records) {
        for (const IgnoredImage& i : r.ignored_images) left_out += "- " + r.relative + ": " + i.file + ": " + i.reason + "\n";
        for (const std::string& w : r.warnings) warnings += "- " + r.relative + ": " + w + "\n";
        if (!r.collapsed.empty()) collapsed += "- " + r.relative + ": " + joined(r.collapsed) + "\n";
    }
    if (!collapsed.empty())
        md += "\n## Collapsed maps\n\nDecoded nearly flat (`nmc validate`'s collapse rule; the warnings say why): "
              "raise their loss_weight in a manifest or the --bpp.\n\n" + collapsed;
    if (!left_out.empty()) md += "\n## Images left out of the packs\n\n" + left_out;
    if (!warnings.empty()) md += "\n## Warnings\n\n" + warnings;
    NMC_RETURN_IF_ERROR(write_text_atomically((fs::path(out_dir) / (stem + ".md")).string(), md));
    return write_text_atomically((fs::path(out_dir) / (stem + ".csv")).string(), csv_report(records, totals));
}

}  // namespace nmc
