package dev.irisjvm.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleReader;
import java.lang.module.ModuleReference;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The public API is only the API: every public or protected signature in a package our modules
 * export to everyone (read from their module descriptors) mentions neither a JavaCPP type
 * ({@code org.bytedeco.*}, generated bindings included) nor a type of a package that is not
 * exported, such as {@code dev.irisjvm.core.internal} or the rendezvous. A failure names the member.
 */
class ApiSurfaceTest {

    @Test
    void everyModuleHasADescriptor() {
        Map<String, ModuleReference> ours = BuiltModules.ours();
        Set<String> explicit = ours.values().stream().map(ModuleReference::descriptor).filter(d -> !d.isAutomatic())
                .map(ModuleDescriptor::name).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(new TreeSet<>(BuiltModules.OURS), explicit, "modules found on " + BuiltModules.modulePath());
        // The native jar is named in its manifest, like JavaCPP's platform modules, and holds no package.
        ModuleDescriptor natives = ours.get("dev.irisjvm.runtime.linux.x86_64").descriptor();
        assertTrue(natives.isAutomatic() && natives.packages().isEmpty(), natives.toString());
        assertEquals(BuiltModules.OURS.size() + 1, ours.size(), ours.keySet().toString());
    }

    @Test
    void exportedSignaturesMentionOnlyExportedTypes() {
        Set<String> exported = new HashSet<>();
        Set<String> ourPackages = new HashSet<>();
        Map<String, ModuleReference> ours = BuiltModules.ours();
        for (ModuleReference m : ours.values()) {
            ourPackages.addAll(m.descriptor().packages());
            m.descriptor().exports().stream().filter(e -> !e.isQualified()).map(ModuleDescriptor.Exports::source)
                    .forEach(exported::add);
        }
        List<String> problems = new ArrayList<>();
        for (ModuleReference m : ours.values()) {
            for (String type : exportedTypes(m)) {
                check(load(type), exported, ourPackages, problems);
            }
        }
        assertEquals(List.of(), problems, "public signatures in exported packages that leak other types");
    }

    /** The public top-level and member types of the module's unqualified exports. */
    private static List<String> exportedTypes(ModuleReference module) {
        Set<String> packages = module.descriptor().exports().stream().filter(e -> !e.isQualified())
                .map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
        try (ModuleReader reader = module.open(); Stream<String> names = reader.list()) {
            return names.filter(n -> n.endsWith(".class") && !n.endsWith("module-info.class"))
                    .map(n -> n.substring(0, n.length() - ".class".length()).replace('/', '.'))
                    .filter(n -> n.lastIndexOf('.') > 0 && packages.contains(n.substring(0, n.lastIndexOf('.'))))
                    .sorted().collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Class<?> load(String name) {
        try {
            return Class.forName(name, false, ApiSurfaceTest.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new AssertionError(name + " is in the module but not on the class path", e);
        }
    }

    private static void check(Class<?> type, Set<String> exported, Set<String> ours, List<String> problems) {
        if (!isVisible(type)) {
            return;
        }
        boolean subclassable = !Modifier.isFinal(type.getModifiers()) && !type.isSealed() && !type.isEnum()
                && !type.isRecord();
        Leak leak = (what, t) -> mentioned(t).stream()
                .filter(c -> leaks(c, exported, ours))
                .forEach(c -> problems.add(type.getName() + what + ": " + c.getName()));
        leak.report(" extends", type.getGenericSuperclass());
        for (Type i : type.getGenericInterfaces()) {
            leak.report(" implements", i);
        }
        for (Field f : type.getDeclaredFields()) {
            if (isApi(f, subclassable)) {
                leak.report("." + f.getName(), f.getGenericType());
            }
        }
        for (Constructor<?> c : type.getDeclaredConstructors()) {
            if (isApi(c, subclassable)) {
                checkExecutable(c, leak);
            }
        }
        for (Method m : type.getDeclaredMethods()) {
            if (isApi(m, subclassable) && !m.isBridge()) {
                leak.report("." + m.getName() + "() returns", m.getGenericReturnType());
                checkExecutable(m, leak);
            }
        }
    }

    private static void checkExecutable(Executable e, Leak leak) {
        String name = e instanceof Constructor ? "(constructor)" : "." + e.getName() + "()";
        for (Type p : e.getGenericParameterTypes()) {
            leak.report(name + " takes", p);
        }
        for (Type x : e.getGenericExceptionTypes()) {
            leak.report(name + " throws", x);
        }
        for (TypeVariable<?> v : e.getTypeParameters()) {
            for (Type bound : v.getBounds()) {
                leak.report(name + " bounds " + v.getName() + " by", bound);
            }
        }
    }

    /** Public, with every enclosing type public: reachable from outside the module. */
    private static boolean isVisible(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getDeclaringClass()) {
            if (!Modifier.isPublic(c.getModifiers()) || c.isAnonymousClass() || c.isLocalClass()) {
                return false;
            }
        }
        return true;
    }

    private static boolean isApi(Member member, boolean subclassable) {
        int mod = member.getModifiers();
        return !member.isSynthetic() && (Modifier.isPublic(mod) || Modifier.isProtected(mod) && subclassable);
    }

    private static boolean leaks(Class<?> c, Set<String> exported, Set<String> ours) {
        String pkg = c.getPackageName();
        return pkg.startsWith("org.bytedeco.") || ours.contains(pkg) && !exported.contains(pkg);
    }

    /** Every class a generic type names: its raw type, type arguments, bounds and array elements. */
    private static Set<Class<?>> mentioned(Type type) {
        Set<Class<?>> out = new HashSet<>();
        collect(type, out, new HashSet<>());
        return out;
    }

    private static void collect(Type type, Set<Class<?>> out, Set<Type> seen) {
        if (type == null || !seen.add(type)) {
            return;
        }
        if (type instanceof Class<?> c) {
            out.add(c.isArray() ? elementOf(c) : c);
        } else if (type instanceof ParameterizedType p) {
            collect(p.getRawType(), out, seen);
            collect(p.getOwnerType(), out, seen);
            for (Type a : p.getActualTypeArguments()) {
                collect(a, out, seen);
            }
        } else if (type instanceof GenericArrayType g) {
            collect(g.getGenericComponentType(), out, seen);
        } else if (type instanceof WildcardType w) {
            Stream.concat(Stream.of(w.getUpperBounds()), Stream.of(w.getLowerBounds())).forEach(b -> collect(b, out, seen));
        } else if (type instanceof TypeVariable<?> v) {
            for (Type b : v.getBounds()) {
                collect(b, out, seen);
            }
        }
    }

    private static Class<?> elementOf(Class<?> array) {
        Class<?> c = array;
        while (c.isArray()) {
            c = c.getComponentType();
        }
        return c;
    }

    /** Records each leaked class of one part of a signature. */
    @FunctionalInterface
    private interface Leak {
        void report(String what, Type type);
    }
}
