#!/bin/sh
# Compiles the service with the JDK alone (no Maven, no network) into OUT
# (default ./build): the classes and application.properties, the class
# path's resources. Run it with:
#   java -cp OUT:/usr/share/java/mariadb-java-client.jar com.example.loot.LootApplication [--key=value ...]
# Needs Debian's openjdk-17-jdk-headless; the driver jar (libmariadb-java)
# is needed at run time only.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/build}
mkdir -p "$out"
find "$here/src/main/java" -name '*.java' >"$out/sources.txt"
javac --release 17 -encoding UTF-8 -Xlint:all,-serial -Werror -d "$out" @"$out/sources.txt"
rm "$out/sources.txt"
cp "$here/src/main/resources/application.properties" "$out/"
