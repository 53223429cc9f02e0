# A portfile written from vcpkg's docs (vcpkg_from_github, PATCHES).
if(VCPKG_TARGET_IS_WINDOWS)
    set(HELLO_SHARED OFF)
endif()

vcpkg_from_github(
    OUT_SOURCE_PATH SOURCE_PATH
    REPO example/hello
    REF "v${VERSION}"
    SHA512 0
    HEAD_REF main
    PATCHES
        0001-fix-build.patch
        0002-greeting.patch # keeps the old greeting
        0003-locale.patch
)

vcpkg_cmake_configure(SOURCE_PATH "${SOURCE_PATH}")
vcpkg_cmake_install()
