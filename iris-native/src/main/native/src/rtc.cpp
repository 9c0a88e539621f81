// rtc.cpp: compiling CUDA C++ at run time with NVRTC, opened with dlopen.
//
// NVRTC is not linked: libiris must load on machines without it (CI, users of the precompiled
// kernels only), and where it exists its file name varies: the toolkit of CUDA 13.0 on some
// installs ships only libnvrtc.alt.so.13, the nvidia wheels put it under site-packages, and JavaCPP's
// redistributable jar unpacks it anywhere. So the library is searched for (iris_runtime.h lists the
// order) and its functions resolved with dlsym. HIP: IRIS_ERROR_UNSUPPORTED (no hipRTC support yet).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "check.h"

#if !defined(IRIS_PLATFORM_HIP)
namespace {

// NVRTC's C API, declared here because its header need not be installed where libiris builds.
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
constexpr nvrtcResult kNvrtcSuccess = 0;

struct Nvrtc {
    nvrtcResult (*version)(int*, int*);
    const char* (*error_string)(nvrtcResult);
    nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*);
    nvrtcResult (*compile)(nvrtcProgram, int, const char* const*);
    nvrtcResult (*log_size)(nvrtcProgram, size_t*);
    nvrtcResult (*log)(nvrtcProgram, char*);
    nvrtcResult (*cubin_size)(nvrtcProgram, size_t*);
    nvrtcResult (*cubin)(nvrtcProgram, char*);
    nvrtcResult (*destroy)(nvrtcProgram*);
    int version_code;
    std::string path;
};

struct Program {
    nvrtcProgram program;
    bool compiled;
};

std::mutex load_mutex;
Nvrtc* loaded = nullptr;  // written once under load_mutex, never freed: NVRTC stays loaded

// NVRTC has no C++ standard library; the device headers include these five, which libcu++
// provides under cuda/std with its names in cuda::std.
constexpr int kShimCount = 5;
const char* const kShimNames[kShimCount] = {"cstdint", "cstddef", "type_traits", "stdint.h", "stddef.h"};
const char* const kShimSources[kShimCount] = {
    "#pragma once\n#include <cuda/std/cstdint>\nnamespace std { using namespace cuda::std; }\n",
    "#pragma once\n#include <cuda/std/cstddef>\nnamespace std { using namespace cuda::std; }\n",
    "#pragma once\n#include <cuda/std/type_traits>\nnamespace std { using namespace cuda::std; }\n",
    "#pragma once\n#include <cuda/std/cstdint>\n",
    "#pragma once\n#include <cuda/std/cstddef>\n",
};

template <class Fn>
bool resolve(void* library, const char* symbol, Fn* out, std::string* why) {
    *out = reinterpret_cast<Fn>(dlsym(library, symbol));
    if (*out == nullptr) *why = std::string("no symbol ") + symbol;
    return *out != nullptr;
}

// Opens one candidate and resolves every function; on failure appends why to *tried and returns null.
Nvrtc* open_candidate(const std::string& candidate, std::string* tried) {
    void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        const char* error = dlerror();
        *tried += "\n  " + candidate + ": " + (error ? error : "dlopen failed");
        return nullptr;
    }
    Nvrtc n{};
    std::string why;
    bool ok = resolve(library, "nvrtcVersion", &n.version, &why) &&
              resolve(library, "nvrtcGetErrorString", &n.error_string, &why) &&
              resolve(library, "nvrtcCreateProgram", &n.create, &why) &&
              resolve(library, "nvrtcCompileProgram", &n.compile, &why) &&
              resolve(library, "nvrtcGetProgramLogSize", &n.log_size, &why) &&
              resolve(library, "nvrtcGetProgramLog", &n.log, &why) &&
              resolve(library, "nvrtcGetCUBINSize", &n.cubin_size, &why) &&
              resolve(library, "nvrtcGetCUBIN", &n.cubin, &why) &&
              resolve(library, "nvrtcDestroyProgram", &n.destroy, &why);
    int major = 0, minor = 0;
    if (ok && n.version(&major, &minor) != kNvrtcSuccess) {
        ok = false;
        why = "nvrtcVersion failed";
    }
    if (!ok) {
        *tried += "\n  " + candidate + ": " + why;
        dlclose(library);
        return nullptr;
    }
    n.version_code = 1000 * major + 10 * minor;
    Dl_info info{};
    n.path = dladdr(reinterpret_cast<void*>(n.version), &info) != 0 && info.dli_fname ? info.dli_fname : candidate;
    // NVRTC dlopens libnvrtc-builtins.so.<major>.<minor> by bare name; loading it first from NVRTC's
    // own folder lets that lookup find it by its soname. Where it is absent the compile reports it.
    std::string builtins = std::filesystem::path(n.path).parent_path() /
                           ("libnvrtc-builtins.so." + std::to_string(major) + "." + std::to_string(minor));
    if (std::filesystem::exists(builtins)) (void)dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL);
    return new Nvrtc(n);
}

// The site-packages (or dist-packages) folders of every python3.* under prefix/lib.
void add_site_packages(const std::string& prefix, std::vector<std::string>* roots) {
    std::error_code ec;
    std::filesystem::path lib = std::filesystem::path(prefix) / "lib";
    for (const auto& entry : std::filesystem::directory_iterator(lib, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("python3", 0) != 0) continue;
        roots->push_back((entry.path() / "site-packages").string());
        roots->push_back((entry.path() / "dist-packages").string());
    }
}

std::vector<std::string> candidates() {
    std::vector<std::string> out = {"libnvrtc.so.13", "libnvrtc.alt.so.13"};
    std::vector<std::string> toolkits;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
        const char* value = std::getenv(var);
        if (value && *value) toolkits.push_back(value);
    }
    toolkits.push_back("/usr/local/cuda");
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/local", ec)) {
        if (entry.path().filename().string().rfind("cuda-13", 0) == 0) toolkits.push_back(entry.path().string());
    }
    for (const std::string& toolkit : toolkits) {
        for (const char* lib : {"/lib64/", "/targets/x86_64-linux/lib/"}) {
            for (const char* file : {"libnvrtc.so.13", "libnvrtc.alt.so.13"}) out.push_back(toolkit + lib + file);
        }
    }
    std::vector<std::string> sites;
    for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
        const char* value = std::getenv(var);
        if (value && *value) add_site_packages(value, &sites);
    }
    if (const char* home = std::getenv("HOME")) add_site_packages(std::string(home) + "/.local", &sites);
    add_site_packages("/usr/local", &sites);
    add_site_packages("/usr", &sites);
    for (const std::string& site : sites) {
        if (!std::filesystem::is_directory(site + "/nvidia", ec)) continue;
        out.push_back(site + "/nvidia/cu13/lib/libnvrtc.so.13");
        out.push_back(site + "/nvidia/cuda_nvrtc/lib/libnvrtc.so.13");
    }
    return out;
}

int require_loaded(const char* function) {
    std::lock_guard<std::mutex> lock(load_mutex);
    if (loaded == nullptr) return iris::fail(IRIS_ERROR_INVALID_ARGUMENT, function, "NVRTC is not loaded (call iris_rtc_version first)");
    return IRIS_SUCCESS;
}

// Records "<function>: <call> failed: <NVRTC's message> (nvrtcResult r)" and returns IRIS_ERROR_GPU.
int fail_nvrtc(const char* function, const char* call, nvrtcResult r) {
    char message[256];
    std::snprintf(message, sizeof(message), "%s failed: %s (nvrtcResult %d)", call, loaded->error_string(r), r);
    return iris::fail(IRIS_ERROR_GPU, function, message);
}

// Copies *size bytes of a program output into out (up to capacity).
template <class SizeFn, class GetFn>
int copy_out(const char* function, const char* what, Program* p, SizeFn size_fn, GetFn get_fn, void* out,
             uint64_t capacity, uint64_t* size) {
    size_t bytes = 0;
    nvrtcResult r = size_fn(p->program, &bytes);
    if (r != kNvrtcSuccess) return fail_nvrtc(function, what, r);
    *size = bytes;
    if (capacity == 0) return IRIS_SUCCESS;
    std::vector<char> all(bytes);
    r = get_fn(p->program, all.data());
    if (r != kNvrtcSuccess) return fail_nvrtc(function, what, r);
    std::memcpy(out, all.data(), bytes < capacity ? bytes : capacity);
    return IRIS_SUCCESS;
}

}  // namespace
#endif  // !IRIS_PLATFORM_HIP

extern "C" {

#if defined(IRIS_PLATFORM_HIP)
namespace {
int unsupported(const char* function) {
    return iris::fail(IRIS_ERROR_UNSUPPORTED, function, "runtime compilation is not available in the HIP build");
}
}  // namespace

int iris_rtc_version(const char*, int*) { iris::clear_error(); return unsupported("iris_rtc_version"); }
int iris_rtc_library(char*, uint64_t) { iris::clear_error(); return unsupported("iris_rtc_library"); }
int iris_rtc_compile(iris_rtc_program*, const char*, const char*, const char* const*, uint32_t, int*) {
    iris::clear_error();
    return unsupported("iris_rtc_compile");
}
int iris_rtc_program_log(iris_rtc_program, char*, uint64_t, uint64_t*) {
    iris::clear_error();
    return unsupported("iris_rtc_program_log");
}
int iris_rtc_program_code(iris_rtc_program, void*, uint64_t, uint64_t*) {
    iris::clear_error();
    return unsupported("iris_rtc_program_code");
}
int iris_rtc_program_destroy(iris_rtc_program) { iris::clear_error(); return unsupported("iris_rtc_program_destroy"); }
#else

int iris_rtc_version(const char* library_path, int* version) {
    iris::clear_error();
    IRIS_REQUIRE(version, "iris_rtc_version", "NULL output");
    std::lock_guard<std::mutex> lock(load_mutex);
    if (loaded == nullptr) {
        std::string tried;
        if (library_path && *library_path) {
            loaded = open_candidate(library_path, &tried);
        } else {
            for (const std::string& candidate : candidates()) {
                if ((loaded = open_candidate(candidate, &tried)) != nullptr) break;
            }
        }
        if (loaded == nullptr) {
            const std::string message = "no NVRTC library could be loaded; tried:" + tried;
            return iris::fail(IRIS_ERROR_NOT_FOUND, "iris_rtc_version", message.c_str());
        }
    }
    *version = loaded->version_code;
    return IRIS_SUCCESS;
}

int iris_rtc_library(char* path, uint64_t capacity) {
    iris::clear_error();
    IRIS_REQUIRE(path && capacity > 0, "iris_rtc_library", "NULL or empty output");
    if (int status = require_loaded("iris_rtc_library")) return status;
    IRIS_REQUIRE(loaded->path.size() < capacity, "iris_rtc_library", "output too small for the path");
    std::memcpy(path, loaded->path.c_str(), loaded->path.size() + 1);
    return IRIS_SUCCESS;
}

int iris_rtc_compile(iris_rtc_program* program, const char* source, const char* name,
                     const char* const* options, uint32_t option_count, int* compiled) {
    iris::clear_error();
    IRIS_REQUIRE(program && source && name && compiled, "iris_rtc_compile", "NULL argument");
    IRIS_REQUIRE(option_count == 0 || options, "iris_rtc_compile", "NULL options");
    if (int status = require_loaded("iris_rtc_compile")) return status;
    nvrtcProgram p = nullptr;
    nvrtcResult r = loaded->create(&p, source, name, kShimCount, kShimSources, kShimNames);
    if (r != kNvrtcSuccess) return fail_nvrtc("iris_rtc_compile", "nvrtcCreateProgram", r);
    r = loaded->compile(p, static_cast<int>(option_count), options);
    // A compile error is the source's, reported through the log; other results are the compiler's.
    constexpr nvrtcResult kCompilationError = 6;
    if (r != kNvrtcSuccess && r != kCompilationError) {
        fail_nvrtc("iris_rtc_compile", "nvrtcCompileProgram", r);
        loaded->destroy(&p);
        return IRIS_ERROR_GPU;
    }
    *compiled = r == kNvrtcSuccess;
    *program = reinterpret_cast<iris_rtc_program>(new Program{p, r == kNvrtcSuccess});
    return IRIS_SUCCESS;
}

int iris_rtc_program_log(iris_rtc_program program, char* log, uint64_t capacity, uint64_t* size) {
    iris::clear_error();
    IRIS_REQUIRE(program && size && (capacity == 0 || log), "iris_rtc_program_log", "NULL argument");
    return copy_out("iris_rtc_program_log", "nvrtcGetProgramLog", reinterpret_cast<Program*>(program),
                    loaded->log_size, loaded->log, log, capacity, size);
}

int iris_rtc_program_code(iris_rtc_program program, void* code, uint64_t capacity, uint64_t* size) {
    iris::clear_error();
    IRIS_REQUIRE(program && size && (capacity == 0 || code), "iris_rtc_program_code", "NULL argument");
    Program* p = reinterpret_cast<Program*>(program);
    IRIS_REQUIRE(p->compiled, "iris_rtc_program_code", "the program did not compile (see its log)");
    return copy_out("iris_rtc_program_code", "nvrtcGetCUBIN", p, loaded->cubin_size, loaded->cubin, code, capacity,
                    size);
}

int iris_rtc_program_destroy(iris_rtc_program program) {
    iris::clear_error();
    IRIS_REQUIRE(program, "iris_rtc_program_destroy", "NULL program");
    Program* p = reinterpret_cast<Program*>(program);
    nvrtcResult r = loaded->destroy(&p->program);
    delete p;
    if (r != kNvrtcSuccess) return fail_nvrtc("iris_rtc_program_destroy", "nvrtcDestroyProgram", r);
    return IRIS_SUCCESS;
}

#endif  // IRIS_PLATFORM_HIP

}  // extern "C"
